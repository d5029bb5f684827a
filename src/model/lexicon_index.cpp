#include "model/lexicon_index.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "base/error.h"
#include "format/binary_fields.h"
#include "format/file_bytes.h"
#include "format/made_from.h"
#include "model/model_file.h"
#include "text/words.h"

namespace nextword {
namespace {

// The layout (data/FORMAT.md, "The lexicon index"): a 96-byte header, then
// n records of 24 bytes in lexicon order, n record numbers in key order,
// m vocabulary records of 12 bytes in id order, m of their numbers in key
// order, then the words' and keys' bytes.
constexpr char kMagic[8] = {'N', 'W', 'L', 'E', 'X', 'I', 'D', 'X'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 96;
constexpr size_t kRecordBytes = 24;  // count i64, word at u32, length u32, key at u32, length u32
constexpr size_t kVocabRecordBytes = 12;  // id u32, key at u32, length u32
constexpr uint64_t kMaxBytes = uint64_t{4} << 30;

struct Header {
  uint32_t version = kVersion;
  uint32_t vocab_size = 0;
  uint64_t vocab_hash = 0;
  int32_t unk_id = -1;
  int32_t bos_id = -1;
  uint64_t lexicon_bytes = 0;
  uint64_t n = 0;
  double oov_count = 0;
  uint64_t strings_bytes = 0;
  uint64_t m = 0;
};

Header read_header(const std::string& path, std::string_view bytes) {
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    throw model_error(path, "magic", "not a lexicon index (expected \"NWLEXIDX\")");
  }
  const char* p = bytes.data();
  Header h;
  h.version = read_field<uint32_t>(p + 8);
  if (h.version != kVersion) {
    throw model_error(path, "version", std::to_string(h.version) + " is not 1");
  }
  h.vocab_size = read_field<uint32_t>(p + 12);
  h.vocab_hash = read_field<uint64_t>(p + 16);
  h.unk_id = read_field<int32_t>(p + 24);
  h.bos_id = read_field<int32_t>(p + 28);
  h.lexicon_bytes = read_field<uint64_t>(p + 32);
  h.n = read_field<uint64_t>(p + 40);
  h.oov_count = read_field<double>(p + 48);
  h.strings_bytes = read_field<uint64_t>(p + 56);
  h.m = read_field<uint64_t>(p + 64);
  const uint64_t rest = bytes.size() - kHeaderBytes;
  if (h.n > rest / (kRecordBytes + 4) || h.m > rest / (kVocabRecordBytes + 4) ||
      h.strings_bytes != rest - h.n * (kRecordBytes + 4) - h.m * (kVocabRecordBytes + 4)) {
    throw model_error(path, "n",
                      "the header's word count and string bytes do not add up to the "
                      "file's size");
  }
  if (!(h.oov_count >= 0) || (h.n > 0 && !(h.oov_count > 0))) {
    throw model_error(path, "oov_count", "not a positive count");
  }
  return h;
}

bool made_for(const Header& h, const LexiconIndexSource& source) {
  return h.vocab_size == static_cast<uint32_t>(source.vocab->size()) &&
         h.vocab_hash == vocabulary_hash(*source.vocab) && h.unk_id == source.unk_id &&
         h.bos_id == source.bos_id &&
         (source.lexicon_bytes == 0 || h.lexicon_bytes == source.lexicon_bytes);
}

}  // namespace

LexiconIndexSource LexiconIndexSource::of(const Model& model) {
  return {&model.vocab, model.unk_id, model.bos_id, 0};
}

uint64_t vocabulary_hash(const Vocabulary& vocab) {
  uint64_t h = 14695981039346656037ULL;
  for (int id = 0; id < vocab.size(); ++id) {
    for (const char c : vocab.word(id)) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    h *= 1099511628211ULL;  // the zero byte after each word
  }
  return h;
}

std::string LexiconIndex::bytes_of(const Lexicon& lexicon, const LexiconIndexSource& source) {
  const Vocabulary& vocab = *source.vocab;
  // The vocabulary's words a completer offers, and their keys: those win.
  std::vector<std::pair<int, std::string>> vocabulary;
  std::unordered_set<std::string> keys;
  for (int id = 0; id < vocab.size(); ++id) {
    if (id == source.unk_id || id == source.bos_id || !has_letter_or_digit(vocab.word(id)))
      continue;
    vocabulary.emplace_back(id, fold_case(vocab.word(id)));
    keys.insert(vocabulary.back().second);
  }
  struct Offered {
    const LexiconEntry* entry;
    std::string key;
  };
  std::vector<Offered> offered;
  double oov_count = 0;
  for (const LexiconEntry& e : lexicon.entries) {
    if (vocab.find(e.word) >= 0) continue;
    oov_count += static_cast<double>(e.count);
    if (!has_letter_or_digit(e.word)) continue;
    std::string key = fold_case(e.word);
    if (!keys.insert(key).second) continue;  // spelled as a word before it, up to case
    offered.push_back({&e, std::move(key)});
  }
  std::string strings;
  std::string records;
  for (const Offered& o : offered) {
    const auto word_at = static_cast<uint32_t>(strings.size());
    strings += o.entry->word;
    const auto key_at = o.key == o.entry->word ? word_at : static_cast<uint32_t>(strings.size());
    if (o.key != o.entry->word) strings += o.key;
    if (strings.size() >= kMaxBytes) throw model_error("lexicon.bin", "", "larger than 4 GiB");
    append_field<int64_t>(records, o.entry->count);
    append_field<uint32_t>(records, word_at);
    append_field<uint32_t>(records, static_cast<uint32_t>(o.entry->word.size()));
    append_field<uint32_t>(records, key_at);
    append_field<uint32_t>(records, static_cast<uint32_t>(o.key.size()));
  }
  std::vector<uint32_t> by_key(offered.size());
  std::iota(by_key.begin(), by_key.end(), 0u);
  std::sort(by_key.begin(), by_key.end(),
            [&](uint32_t a, uint32_t b) { return offered[a].key < offered[b].key; });
  std::string vocabulary_records;
  for (const auto& [id, key] : vocabulary) {
    append_field<uint32_t>(vocabulary_records, static_cast<uint32_t>(id));
    append_field<uint32_t>(vocabulary_records, static_cast<uint32_t>(strings.size()));
    append_field<uint32_t>(vocabulary_records, static_cast<uint32_t>(key.size()));
    strings += key;
  }
  if (strings.size() >= kMaxBytes) throw model_error("lexicon.bin", "", "larger than 4 GiB");
  std::vector<uint32_t> vocabulary_by_key(vocabulary.size());
  std::iota(vocabulary_by_key.begin(), vocabulary_by_key.end(), 0u);
  std::sort(vocabulary_by_key.begin(), vocabulary_by_key.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(vocabulary[a].second, a) < std::tie(vocabulary[b].second, b);
  });

  std::string out(kMagic, sizeof kMagic);
  append_field<uint32_t>(out, kVersion);
  append_field<uint32_t>(out, static_cast<uint32_t>(vocab.size()));
  append_field<uint64_t>(out, vocabulary_hash(vocab));
  append_field<int32_t>(out, source.unk_id);
  append_field<int32_t>(out, source.bos_id);
  append_field<uint64_t>(out, source.lexicon_bytes);
  append_field<uint64_t>(out, offered.size());
  append_field<double>(out, oov_count);
  append_field<uint64_t>(out, strings.size());
  append_field<uint64_t>(out, vocabulary.size());
  out.resize(kHeaderBytes, '\0');
  out += records;
  for (const uint32_t r : by_key) append_field<uint32_t>(out, r);
  out += vocabulary_records;
  for (const uint32_t r : vocabulary_by_key) append_field<uint32_t>(out, r);
  out += strings;
  return out;
}

LexiconIndex::LexiconIndex(std::shared_ptr<const FileBytes> file) : file_(std::move(file)) {
  const Header h = read_header(file_->path(), file_->text());
  n_ = static_cast<size_t>(h.n);
  oov_count_ = h.oov_count;
  vocab_size_ = h.vocab_size;
  records_ = file_->data() + kHeaderBytes;
  by_key_ = records_ + n_ * kRecordBytes;
  m_ = static_cast<size_t>(h.m);
  vocabulary_ = by_key_ + n_ * 4;
  vocabulary_by_key_ = vocabulary_ + m_ * kVocabRecordBytes;
  strings_ = std::string_view(vocabulary_by_key_ + m_ * 4, static_cast<size_t>(h.strings_bytes));
}

LexiconIndex LexiconIndex::build(const Lexicon& lexicon, const LexiconIndexSource& source) {
  return LexiconIndex(FileBytes::from_bytes("lexicon.bin", bytes_of(lexicon, source)));
}

std::optional<LexiconIndex> LexiconIndex::open(const std::string& path,
                                               const LexiconIndexSource& source) {
  std::shared_ptr<const FileBytes> file =
      FileBytes::open(path, FileLimits{static_cast<size_t>(kMaxBytes), "a lexicon.bin"});
  if (!made_for(read_header(path, file->text()), source)) return std::nullopt;
  return LexiconIndex(std::move(file));
}

std::optional<LexiconIndex> LexiconIndex::from_bytes(const std::string& path, std::string bytes,
                                                     const LexiconIndexSource& source) {
  std::shared_ptr<const FileBytes> file = FileBytes::from_bytes(path, std::move(bytes));
  if (!made_for(read_header(path, file->text()), source)) return std::nullopt;
  return LexiconIndex(std::move(file));
}

std::optional<LexiconIndex> LexiconIndex::beside(const std::string& vocab_path,
                                                 const LexiconIndexSource& source) {
  const std::filesystem::path dir = std::filesystem::path(vocab_path).parent_path();
  const std::string tsv = (dir / "lexicon.tsv").string(), bin = (dir / "lexicon.bin").string();
  struct stat tsv_info {
  }, bin_info{};
  const bool has_tsv = ::stat(tsv.c_str(), &tsv_info) == 0;
  if (::stat(bin.c_str(), &bin_info) == 0) {
    // Older than the lexicon.tsv beside it: made from an earlier one.
    const bool fresh = !has_tsv || not_older(bin_info, tsv_info);
    LexiconIndexSource of_tsv = source;
    of_tsv.lexicon_bytes = has_tsv ? static_cast<uint64_t>(tsv_info.st_size) : 0;
    if (fresh) {
      if (std::optional<LexiconIndex> index = open(bin, of_tsv)) return index;
    }
  }
  if (!has_tsv) return std::nullopt;
  return build(read_lexicon(tsv), source);
}

bool LexiconIndex::mapped() const { return file_->mapped(); }

LexiconIndex::Word LexiconIndex::at(size_t rank) const {
  const auto fault = [&](const char* what) {
    return model_error(file_->path(), "words[" + std::to_string(rank) + "]", what);
  };
  if (rank >= n_) throw fault("no such word");
  const char* r = records_ + rank * kRecordBytes;
  const auto count = read_field<int64_t>(r);
  const auto word_at = read_field<uint32_t>(r + 8), word_length = read_field<uint32_t>(r + 12);
  const auto key_at = read_field<uint32_t>(r + 16), key_length = read_field<uint32_t>(r + 20);
  const auto fits = [&](uint64_t at, uint64_t length) {
    return at <= strings_.size() && length <= strings_.size() - at;
  };
  if (!fits(word_at, word_length) || !fits(key_at, key_length)) throw fault("outside the file");
  if (count < 1) throw fault("a count below 1");
  return {strings_.substr(word_at, word_length), strings_.substr(key_at, key_length), count};
}

size_t LexiconIndex::rank_by_key(size_t j) const {
  const auto rank = j < n_ ? read_field<uint32_t>(by_key_ + j * 4) : n_;
  if (rank >= n_) {
    throw model_error(file_->path(), "by_key[" + std::to_string(j) + "]", "not a word's number");
  }
  return rank;
}

LexiconIndex::VocabularyWord LexiconIndex::vocabulary_word(size_t j) const {
  const auto fault = [&](const char* what) {
    return model_error(file_->path(), "vocabulary[" + std::to_string(j) + "]", what);
  };
  if (j >= m_) throw fault("no such word");
  const char* r = vocabulary_ + j * kVocabRecordBytes;
  const auto id = read_field<uint32_t>(r);
  const auto key_at = read_field<uint32_t>(r + 4), key_length = read_field<uint32_t>(r + 8);
  if (id >= vocab_size_) throw fault("not an id of the vocabulary");
  if (key_at > strings_.size() || key_length > strings_.size() - key_at) {
    throw fault("outside the file");
  }
  return {static_cast<int>(id), strings_.substr(key_at, key_length)};
}

size_t LexiconIndex::vocabulary_by_key(size_t j) const {
  const auto at = j < m_ ? read_field<uint32_t>(vocabulary_by_key_ + j * 4) : m_;
  if (at >= m_) {
    throw model_error(file_->path(), "vocabulary_by_key[" + std::to_string(j) + "]",
                      "not a word's number");
  }
  return at;
}

std::string_view LexiconIndex::key_by_key(size_t j) const { return at(rank_by_key(j)).key; }

std::pair<size_t, size_t> LexiconIndex::fitting(std::string_view prefix_key) const {
  // Binary searches over the keys in order (a few dozen pages of a mapped
  // file for one prefix): the first key not below the prefix, then the
  // first after it that does not start with it.
  const auto first_where = [&](size_t low, auto past) {
    size_t high = n_;
    while (low < high) {
      const size_t mid = low + (high - low) / 2;
      if (past(key_by_key(mid))) {
        high = mid;
      } else {
        low = mid + 1;
      }
    }
    return low;
  };
  const size_t first = first_where(0, [&](std::string_view key) { return key >= prefix_key; });
  return {first,
          first_where(first, [&](std::string_view key) { return !key.starts_with(prefix_key); })};
}

std::optional<size_t> LexiconIndex::find(std::string_view key) const {
  const auto [first, last] = fitting(key);
  if (first < last && key_by_key(first) == key) return rank_by_key(first);
  return std::nullopt;
}

}  // namespace nextword
