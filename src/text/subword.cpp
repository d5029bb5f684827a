#include "text/subword.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <queue>

#include "base/error.h"

namespace nextword {
namespace {

// A longer piece is no piece of a tokenizer: llama2.c's 32,000-piece model's
// longest is 27 bytes.
constexpr int kMostPieceLength = 1 << 16;
// run.c merges a pair only when its piece scores above this.
constexpr float kLowestMergeScore = -1e10f;

template <class T>
T read_le(const char* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

}  // namespace

int byte_piece(std::string_view piece) {
  if (piece.size() != 6 || !piece.starts_with("<0x") || piece[5] != '>') return -1;
  int value = 0;
  for (const char c : piece.substr(3, 2)) {
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

std::string piece_text(std::string_view piece) {
  const int byte = byte_piece(piece);
  return byte >= 0 ? std::string(1, static_cast<char>(byte)) : std::string(piece);
}

SubwordPieces read_tokenizer_bin(std::string_view bytes, int vocab_size, const std::string& file) {
  if (vocab_size <= 0) {
    throw model_error(file, "vocab_size", "must be positive, not " + std::to_string(vocab_size));
  }
  SubwordPieces out;
  size_t at = 0;
  auto need = [&](size_t n, const std::string& field) {
    if (bytes.size() - at < n) {
      throw model_error(file, field,
                        "the file ends at byte " + std::to_string(bytes.size()) + ", " +
                            std::to_string(n) + " bytes short of it at byte " + std::to_string(at));
    }
  };
  need(4, "max_piece_length");
  out.max_piece_length = read_le<int32_t>(bytes.data());
  at = 4;
  if (out.max_piece_length <= 0 || out.max_piece_length > kMostPieceLength) {
    throw model_error(file, "max_piece_length",
                      "must be 1 to " + std::to_string(kMostPieceLength) + ", not " +
                          std::to_string(out.max_piece_length));
  }
  out.pieces.reserve(static_cast<size_t>(vocab_size));
  out.scores.reserve(static_cast<size_t>(vocab_size));
  for (int i = 0; i < vocab_size; ++i) {
    const std::string field = "piece " + std::to_string(i);
    need(8, field);
    const auto score = read_le<float>(bytes.data() + at);
    const auto length = read_le<int32_t>(bytes.data() + at + 4);
    at += 8;
    if (!std::isfinite(score)) throw model_error(file, field, "score is not finite");
    if (length <= 0 || length > out.max_piece_length) {
      throw model_error(file, field,
                        "length must be 1 to max_piece_length " +
                            std::to_string(out.max_piece_length) + ", not " +
                            std::to_string(length));
    }
    need(static_cast<size_t>(length), field);
    out.pieces.emplace_back(bytes.substr(at, static_cast<size_t>(length)));
    out.scores.push_back(score);
    at += static_cast<size_t>(length);
  }
  if (at != bytes.size()) {
    throw model_error(file, "",
                      std::to_string(bytes.size() - at) + " bytes after the last of " +
                          std::to_string(vocab_size) + " pieces (the checkpoint's vocab_size)");
  }
  return out;
}

SubwordTokenizer::SubwordTokenizer(SubwordPieces pieces, const std::string& file,
                                   SpecialPieces special)
    : PieceTokenizer(special), pieces_(std::move(pieces)) {
  byte_ids_.fill(-1);
  byte_of_.assign(pieces_.pieces.size(), -1);
  ids_.reserve(pieces_.pieces.size());
  for (int id = 0; id < size(); ++id) {
    ids_.emplace(pieces_.pieces[static_cast<size_t>(id)], id);  // the first of equal pieces
    const int byte = byte_piece(piece(id));
    byte_of_[static_cast<size_t>(id)] = byte;
    if (byte >= 0 && byte_ids_[static_cast<size_t>(byte)] < 0) {
      byte_ids_[static_cast<size_t>(byte)] = id;
    }
  }
  space_ = find(" ");
  if (space_ < 0) throw model_error(file, "", "no piece \" \" (the dummy prefix)");
  for (size_t byte = 0; byte < byte_ids_.size(); ++byte) {
    if (byte_ids_[byte] < 0) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02zX>", byte);
      throw model_error(file, "", std::string("no byte piece ") + name);
    }
  }
}

int SubwordTokenizer::find(std::string_view text) const {
  const auto it = ids_.find(text);
  return it == ids_.end() ? -1 : it->second;
}

std::vector<int> SubwordTokenizer::encode(std::string_view text) const {
  std::vector<int> ids;
  if (text.empty()) return ids;
  ids.push_back(space_);
  for (size_t i = 0; i < text.size();) {
    // A lead byte and the continuation bytes after it, at most 4 in all.
    size_t n = 1;
    while (n < 4 && i + n < text.size() &&
           (static_cast<unsigned char>(text[i + n]) & 0xC0) == 0x80) {
      ++n;
    }
    const std::string_view character = text.substr(i, n);
    if (const int id = find(character); id >= 0) {
      ids.push_back(id);
    } else {
      for (const char c : character) ids.push_back(byte_ids_[static_cast<unsigned char>(c)]);
    }
    i += n;
  }

  // Merges, best first: a heap of neighbour pairs, checked when taken (a
  // pair whose either side has changed since is stale). Symbols keep their
  // first position, so the smaller left position is the leftmost pair.
  const size_t n = ids.size();
  std::vector<int> next(n), previous(n);
  std::vector<uint32_t> version(n, 0);
  for (size_t i = 0; i < n; ++i) {
    next[i] = static_cast<int>(i + 1);
    previous[i] = static_cast<int>(i) - 1;
  }
  struct Pair {
    float score;
    int left, right, id;
    uint32_t left_version, right_version;
  };
  auto worse = [](const Pair& a, const Pair& b) {
    return a.score != b.score ? a.score < b.score : a.left > b.left;
  };
  std::priority_queue<Pair, std::vector<Pair>, decltype(worse)> pairs(worse);
  std::string joined;
  auto consider = [&](int left, int right) {
    if (left < 0 || right >= static_cast<int>(n)) return;
    joined = piece(ids[static_cast<size_t>(left)]);
    joined += piece(ids[static_cast<size_t>(right)]);
    const int id = find(joined);
    if (id < 0 || !(pieces_.scores[static_cast<size_t>(id)] > kLowestMergeScore)) return;
    pairs.push({pieces_.scores[static_cast<size_t>(id)], left, right, id,
                version[static_cast<size_t>(left)], version[static_cast<size_t>(right)]});
  };
  for (size_t i = 0; i + 1 < n; ++i) consider(static_cast<int>(i), static_cast<int>(i + 1));
  while (!pairs.empty()) {
    const Pair p = pairs.top();
    pairs.pop();
    const auto l = static_cast<size_t>(p.left), r = static_cast<size_t>(p.right);
    if (version[l] != p.left_version || version[r] != p.right_version || next[l] != p.right) {
      continue;
    }
    ids[l] = p.id;
    ++version[l];
    ++version[r];  // r is gone
    next[l] = next[r];
    if (next[l] < static_cast<int>(n)) previous[static_cast<size_t>(next[l])] = p.left;
    consider(previous[l], p.left);
    consider(p.left, next[l]);
  }
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(n); i = next[static_cast<size_t>(i)]) {
    out.push_back(ids[static_cast<size_t>(i)]);
  }
  return out;
}

std::string SubwordTokenizer::decode(int previous, int token) const {
  if (const int byte = byte_of(token); byte >= 0) return std::string(1, static_cast<char>(byte));
  std::string_view text = piece(token);
  if ((previous < 0 || previous == bos()) && text.starts_with(' ')) text.remove_prefix(1);
  return std::string(text);
}

}  // namespace nextword
