#include "model/vocab_index.h"

#include <sys/stat.h>

#include <cstring>
#include <filesystem>

#include "base/error.h"
#include "format/binary_fields.h"
#include "format/file_bytes.h"
#include "format/made_from.h"
#include "text/utf8.h"

namespace nextword {
namespace {

// The layout (data/FORMAT.md, "vocab.bin"): a 64-byte header, then V word
// ends (u32), the table of S slots (i32, -1 empty), then the words' bytes.
constexpr char kMagic[8] = {'N', 'W', 'V', 'O', 'C', 'I', 'D', 'X'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 64;
constexpr uint64_t kMaxBytes = uint64_t{1} << 30;

// The checked vocabulary of `file`'s bytes (see vocab_index.h).
std::optional<Vocabulary> vocabulary_of(std::shared_ptr<const FileBytes> file,
                                        uint64_t json_bytes) {
  const std::string& path = file->path();
  const char* p = file->data();
  const uint64_t size = file->size();
  if (size < kHeaderBytes || std::memcmp(p, kMagic, sizeof kMagic) != 0) {
    throw model_error(path, "magic", "not a vocabulary index (expected \"NWVOCIDX\")");
  }
  if (const auto version = read_field<uint32_t>(p + 8); version != kVersion) {
    throw model_error(path, "version", std::to_string(version) + " is not 1");
  }
  const auto words = read_field<uint32_t>(p + 12);
  const auto made_from = read_field<uint64_t>(p + 16);
  const auto chars_bytes = read_field<uint64_t>(p + 24);
  const auto slots = read_field<uint64_t>(p + 32);
  if (words == 0) throw model_error(path, "words", "the vocabulary is empty");
  if (slots < 2 * uint64_t{words} || (slots & (slots - 1)) != 0 || slots > size) {
    throw model_error(path, "slots",
                      std::to_string(slots) + " is not a power of two at least twice the " +
                          std::to_string(words) + " words within the file");
  }
  if (chars_bytes != size - kHeaderBytes - 4 * (uint64_t{words} + slots) || chars_bytes > size) {
    throw model_error(path, "chars_bytes",
                      "the header's words, slots and bytes do not add up to the file's size");
  }
  if (made_from != json_bytes) return std::nullopt;
  // Aligned: the header is 64 bytes and the ends and slots are 4 each.
  const auto* ends = reinterpret_cast<const uint32_t*>(p + kHeaderBytes);
  const auto* ids = reinterpret_cast<const int32_t*>(p + kHeaderBytes + 4 * uint64_t{words});
  const std::string_view chars(p + kHeaderBytes + 4 * (uint64_t{words} + slots), chars_bytes);
  // Checks without a branch a word, vectorized: a table slot's id is -1 or
  // an id and what it holds is a coin toss for the branch predictor.
  bool ends_out_of_order = ends[words - 1] != chars_bytes;
  for (uint32_t i = 1; i < words; ++i) ends_out_of_order |= ends[i] < ends[i - 1];
  if (ends_out_of_order) {
    throw model_error(path, "ends", "do not rise to the characters' end");
  }
  bool mid_character = false;  // a word that ends inside a character
  for (uint32_t i = 0; i + 1 < words; ++i) {
    mid_character |=
        ends[i] < chars_bytes && (static_cast<unsigned char>(chars[ends[i]]) & 0xC0) == 0x80;
  }
  if (mid_character || !is_valid_utf8(chars)) {
    throw model_error(path, "chars", "not UTF-8 words");
  }
  // Every id in range and a free slot (where a search ends); an id without
  // a slot would only go unfound.
  bool out_of_range = false;
  uint64_t free_slots = 0;
  const auto most = static_cast<int32_t>(words);
  for (uint64_t i = 0; i < slots; ++i) {
    out_of_range |= ids[i] < -1 || ids[i] >= most;
    free_slots += ids[i] == -1;
  }
  if (out_of_range || free_slots == 0) {
    throw model_error(path, "slots", "hold an id out of range, or no free slot");
  }
  return Vocabulary::from_table(std::move(file), chars, {ends, words},
                                {ids, static_cast<size_t>(slots)});
}

}  // namespace

std::string vocab_index_bytes(const Vocabulary& vocab, uint64_t json_bytes) {
  std::string out(kMagic, sizeof kMagic);
  append_field<uint32_t>(out, kVersion);
  append_field<uint32_t>(out, static_cast<uint32_t>(vocab.size()));
  append_field<uint64_t>(out, json_bytes);
  append_field<uint64_t>(out, vocab.chars().size());
  append_field<uint64_t>(out, vocab.table().size());
  out.resize(kHeaderBytes, '\0');
  for (const uint32_t end : vocab.ends()) append_field<uint32_t>(out, end);
  for (const int32_t id : vocab.table()) append_field<int32_t>(out, id);
  out += vocab.chars();
  return out;
}

std::optional<Vocabulary> read_vocab_index(const std::string& path, uint64_t json_bytes) {
  return vocabulary_of(FileBytes::open(path, FileLimits{kMaxBytes, "a vocab.bin"}), json_bytes);
}

std::optional<Vocabulary> vocab_index_from_bytes(const std::string& path, std::string bytes,
                                                 uint64_t json_bytes) {
  return vocabulary_of(FileBytes::from_bytes(path, std::move(bytes)), json_bytes);
}

std::optional<IndexedVocabulary> fresh_vocab_index(const std::string& vocab_json) {
  const std::string bin = (std::filesystem::path(vocab_json).parent_path() / "vocab.bin").string();
  struct stat json_info {
  }, bin_info{};
  if (::stat(bin.c_str(), &bin_info) != 0 || ::stat(vocab_json.c_str(), &json_info) != 0 ||
      !S_ISREG(json_info.st_mode) || !not_older(bin_info, json_info)) {
    return std::nullopt;
  }
  const auto json_bytes = static_cast<uint64_t>(json_info.st_size);
  std::optional<Vocabulary> vocab = read_vocab_index(bin, json_bytes);
  if (!vocab) return std::nullopt;
  return IndexedVocabulary{std::move(*vocab), json_bytes};
}

}  // namespace nextword
