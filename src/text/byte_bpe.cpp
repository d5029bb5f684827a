#include "text/byte_bpe.h"

#include <algorithm>
#include <utility>

#include "base/error.h"
#include "text/utf8.h"

namespace nextword {
namespace {

// The stand-ins both ways: characters[byte], and bytes[c] for c < 0x144.
struct ByteCharacters {
  std::array<char32_t, 256> characters{};
  std::array<int, 0x144> bytes{};

  ByteCharacters() {
    bytes.fill(-1);
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool itself = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      characters[static_cast<size_t>(b)] = itself ? static_cast<char32_t>(b) : next++;
      bytes[characters[static_cast<size_t>(b)]] = b;
    }
  }
};

const ByteCharacters& byte_characters() {
  static const ByteCharacters table;
  return table;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// The code point of the valid UTF-8 sequence of `n` bytes at `p`.
char32_t decode_utf8(const char* p, size_t n) {
  const auto byte = [&](size_t k) { return static_cast<char32_t>(static_cast<uint8_t>(p[k])); };
  if (n == 1) return byte(0);
  char32_t c = byte(0) & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) c = (c << 6) | (byte(k) & 0x3F);
  return c;
}

// `text` with each byte that starts no UTF-8 sequence replaced by U+FFFD.
std::string with_replacements(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  const char* end = text.data() + text.size();
  for (const char* p = text.data(); p < end;) {
    const size_t n = utf8_sequence_length(p, end);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++p;
    } else {
      out.append(p, n);
      p += n;
    }
  }
  return out;
}

// The pre-tokenizer's name, checked.
const std::string& known_pre(const std::string& pre, const std::string& file) {
  if (!PreTokenizer::known(pre)) {
    std::string names;
    for (const std::string& name : PreTokenizer::names()) {
      names += (names.empty() ? "" : ", ") + name;
    }
    throw model_error(
        file, "metadata.tokenizer.ggml.pre",
        "\"" + escape_bytes(pre) + "\" is not a pre-tokenizer nextword knows (" + names + ")");
  }
  return pre;
}

uint64_t pair_key(int left, int right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

// The first slot to look in for `pair` in a table of `mask` + 1 slots
// (Fibonacci hashing: the product's high bits).
size_t first_slot(uint64_t pair, size_t mask) {
  return static_cast<size_t>((pair * 0x9E3779B97F4A7C15ull) >> 40) & mask;
}

}  // namespace

char32_t byte_character(uint8_t byte) { return byte_characters().characters[byte]; }

int character_byte(char32_t c) {
  const auto& bytes = byte_characters().bytes;
  return c < bytes.size() ? bytes[c] : -1;
}

ByteBpeTokenizer::ByteBpeTokenizer(BpeVocabulary vocabulary, const std::string& file,
                                   SpecialPieces special)
    : PieceTokenizer(special),
      tokens_(std::move(vocabulary.tokens)),
      types_(std::move(vocabulary.types)),
      pre_(known_pre(vocabulary.pre, file)) {
  if (tokens_.empty()) throw model_error(file, "metadata.tokenizer.ggml.tokens", "no tokens");
  if (types_.empty()) types_.assign(tokens_.size(), kNormalToken);
  if (types_.size() != tokens_.size()) {
    throw model_error(
        file, "metadata.tokenizer.ggml.token_type",
        std::to_string(types_.size()) + " types for " + std::to_string(tokens_.size()) + " tokens");
  }
  ids_.reserve(tokens_.size());
  user_tokens_.emplace_back();  // the trie's root
  for (size_t id = 0; id < tokens_.size(); ++id) {
    const std::string& spelling = tokens_[id];
    ids_.emplace(spelling, static_cast<int>(id));
    // A user-defined token is found in text only when it is UTF-8, so that
    // it never ends inside a character of the text.
    if (types_[id] != kUserDefinedToken || spelling.empty() || !is_valid_utf8(spelling)) continue;
    int32_t node = 0;
    for (const char c : spelling) {
      const auto byte = static_cast<unsigned char>(c);
      auto& next = user_tokens_[static_cast<size_t>(node)].next;
      const auto edge =
          std::find_if(next.begin(), next.end(), [&](const auto& e) { return e.first == byte; });
      if (edge != next.end()) {
        node = edge->second;
      } else {
        const auto added = static_cast<int32_t>(user_tokens_.size());
        next.emplace_back(byte, added);
        user_tokens_.emplace_back();
        node = added;
      }
    }
    auto& end = user_tokens_[static_cast<size_t>(node)].id;
    if (end < 0) end = static_cast<int32_t>(id);
  }
  for (int b = 0; b < 256; ++b) {
    std::string spelling;
    append_utf8(spelling, byte_character(static_cast<uint8_t>(b)));
    byte_ids_[static_cast<size_t>(b)] = find(spelling);
  }
  size_t slots = 16;
  while (slots < 2 * vocabulary.merges.size()) slots *= 2;
  merges_.resize(slots);
  for (size_t rank = 0; rank < vocabulary.merges.size(); ++rank) {
    const std::string& merge = vocabulary.merges[rank];
    const auto fault = [&](const std::string& what) {
      return model_error(file, "metadata.tokenizer.ggml.merges[" + std::to_string(rank) + "]",
                         what);
    };
    const size_t space = merge.find(' ', 1);
    if (space == std::string::npos || space + 1 == merge.size()) {
      throw fault("\"" + escape_bytes(merge) + "\" is not two tokens with a space between");
    }
    const std::string left = merge.substr(0, space), right = merge.substr(space + 1);
    const int left_id = find(left), right_id = find(right), made = find(left + right);
    if (left_id < 0) throw fault("\"" + escape_bytes(left) + "\" is not a token");
    if (right_id < 0) throw fault("\"" + escape_bytes(right) + "\" is not a token");
    if (made < 0) {
      throw fault("\"" + escape_bytes(merge) + "\" makes \"" + escape_bytes(left + right) +
                  "\", which is not a token");
    }
    const uint64_t pair = pair_key(left_id, right_id);
    size_t slot = first_slot(pair, slots - 1);
    while (merges_[slot].rank >= 0 && merges_[slot].pair != pair) slot = (slot + 1) & (slots - 1);
    if (merges_[slot].rank < 0) merges_[slot] = {pair, static_cast<int32_t>(rank), made};
  }
}

const ByteBpeTokenizer::Merge* ByteBpeTokenizer::merge_of(int left, int right) const {
  const uint64_t pair = pair_key(left, right);
  const size_t mask = merges_.size() - 1;
  for (size_t slot = first_slot(pair, mask);; slot = (slot + 1) & mask) {
    const Merge& merge = merges_[slot];
    if (merge.rank < 0) return nullptr;
    if (merge.pair == pair) return &merge;
  }
}

int ByteBpeTokenizer::find(std::string_view spelling) const {
  const auto it = ids_.find(spelling);
  return it == ids_.end() ? -1 : it->second;
}

std::pair<int, size_t> ByteBpeTokenizer::user_token_at(std::string_view text) const {
  std::pair<int, size_t> longest{-1, 0};
  size_t node = 0;
  for (size_t at = 0; at < text.size(); ++at) {
    const auto byte = static_cast<unsigned char>(text[at]);
    const auto& next = user_tokens_[node].next;
    const auto edge =
        std::find_if(next.begin(), next.end(), [&](const auto& e) { return e.first == byte; });
    if (edge == next.end()) break;
    node = static_cast<size_t>(edge->second);
    if (user_tokens_[node].id >= 0) longest = {user_tokens_[node].id, at + 1};
  }
  return longest;
}

// A piece's symbols, a list linked both ways (a merge keeps the left one
// and unlinks the right), and the pairs of neighbours that have a merge,
// the first merge on top of the heap, then the leftmost.
struct ByteBpeTokenizer::Scratch {
  struct Symbol {
    int id, previous, next;
  };
  struct Pair {
    int32_t rank, made;                        // the merge
    int left, right;                           // symbols
    int left_id, right_id;                     // their tokens when the pair was found
    bool operator<(const Pair& other) const {  // std::push_heap's order: the top is the largest
      return rank > other.rank || (rank == other.rank && left > other.left);
    }
  };
  std::vector<Symbol> symbols;
  std::vector<Pair> pairs;
  std::string spelling;
};

std::vector<int> ByteBpeTokenizer::encode(std::string_view text) const {
  std::string replaced;
  if (!is_valid_utf8(text)) {
    replaced = with_replacements(text);
    text = replaced;
  }
  Scratch scratch;
  std::vector<int> out;
  out.reserve(text.size() / 3);
  const bool user_defined = !user_tokens_[0].next.empty();
  size_t start = 0;  // of the text not yet encoded
  const char* end = text.data() + text.size();
  for (size_t at = 0; user_defined && at < text.size();) {
    const auto [id, length] = user_token_at(text.substr(at));
    if (id >= 0) {
      encode_fragment(text.substr(start, at - start), scratch, out);
      out.push_back(id);
      at += length;
      start = at;
    } else {
      at += utf8_sequence_length(text.data() + at, end);
    }
  }
  encode_fragment(text.substr(start), scratch, out);
  return out;
}

void ByteBpeTokenizer::encode_fragment(std::string_view fragment, Scratch& scratch,
                                       std::vector<int>& out) const {
  for (const std::string_view piece : pre_.split(fragment)) encode_piece(piece, scratch, out);
}

void ByteBpeTokenizer::encode_piece(std::string_view piece, Scratch& scratch,
                                    std::vector<int>& out) const {
  if (pre_.whole_tokens_first()) {
    scratch.spelling.clear();
    for (const char c : piece) {
      append_utf8(scratch.spelling, byte_character(static_cast<uint8_t>(c)));
    }
    const int id = find(scratch.spelling);
    if (id >= 0 && types_[static_cast<size_t>(id)] != kControlToken) {
      out.push_back(id);
      return;
    }
  }
  auto& symbols = scratch.symbols;
  auto& pairs = scratch.pairs;
  const int n = static_cast<int>(piece.size());
  symbols.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto byte = static_cast<uint8_t>(piece[static_cast<size_t>(i)]);
    symbols[static_cast<size_t>(i)] = {byte_ids_[byte], i - 1, i + 1 < n ? i + 1 : -1};
  }
  pairs.clear();
  const auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const int a = symbols[static_cast<size_t>(left)].id;
    const int b = symbols[static_cast<size_t>(right)].id;
    if (a < 0 || b < 0) return;
    const Merge* merge = merge_of(a, b);
    if (merge == nullptr) return;
    pairs.push_back({merge->rank, merge->id, left, right, a, b});
    std::push_heap(pairs.begin(), pairs.end());
  };
  for (int i = 0; i + 1 < n; ++i) consider(i, i + 1);
  while (!pairs.empty()) {
    std::pop_heap(pairs.begin(), pairs.end());
    const Scratch::Pair pair = pairs.back();
    pairs.pop_back();
    auto& left = symbols[static_cast<size_t>(pair.left)];
    auto& right = symbols[static_cast<size_t>(pair.right)];
    // A pair one of whose symbols has merged since is stale.
    if (left.id != pair.left_id || left.next != pair.right || right.id != pair.right_id) continue;
    left.id = pair.made;
    left.next = right.next;
    if (right.next >= 0) symbols[static_cast<size_t>(right.next)].previous = pair.left;
    right.id = -1;
    consider(left.previous, pair.left);
    consider(pair.left, left.next);
  }
  for (int i = n > 0 ? 0 : -1; i >= 0; i = symbols[static_cast<size_t>(i)].next) {
    if (symbols[static_cast<size_t>(i)].id >= 0) out.push_back(symbols[static_cast<size_t>(i)].id);
  }
}

std::string ByteBpeTokenizer::token_bytes(int id) const {
  if (id < 0 || id >= size()) {
    throw input_error("token id " + std::to_string(id) + " is not in the vocabulary (ids 0 to " +
                      std::to_string(size() - 1) + ")");
  }
  const std::string& spelling = tokens_[static_cast<size_t>(id)];
  const int32_t type = types_[static_cast<size_t>(id)];
  if (type == kControlToken || type == kUnknownToken || type == kUserDefinedToken) return spelling;
  std::string bytes;
  const char* end = spelling.data() + spelling.size();
  for (const char* p = spelling.data(); p < end;) {
    const size_t n = std::max<size_t>(1, utf8_sequence_length(p, end));
    const int byte =
        n == 1 && static_cast<uint8_t>(*p) >= 0x80 ? -1 : character_byte(decode_utf8(p, n));
    if (byte >= 0) {
      bytes += static_cast<char>(byte);
    } else {
      bytes.append(p, n);
    }
    p += n;
  }
  return bytes;
}

std::string ByteBpeTokenizer::decode(const std::vector<int>& ids) const {
  std::string bytes;
  for (const int id : ids) bytes += token_bytes(id);
  return bytes;
}

}  // namespace nextword
