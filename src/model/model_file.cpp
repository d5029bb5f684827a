#include "model/model_file.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "format/json_scan.h"
#include "model/gguf_model.h"
#include "model/vocab_index.h"
#include "model/weights_file.h"
#include "text/utf8.h"

namespace nextword {
namespace {

// 2^24 words (the most a config allows) of a few bytes each fit in 256 MiB.
constexpr size_t kMaxVocabBytes = size_t{256} << 20;

using nlohmann::json;

// The words of `text`, packed as Vocabulary::from_packed takes them, when
// it is a JSON array of strings with no escape but \" and \\ (what `train`
// writes), checked as strictly as json_scan checks (no control character,
// UTF-8, nothing after the array); else nullopt, for json_scan and
// nlohmann's DOM to read and to name what is wrong. The scanner, then a DOM,
// would be a large share of a one-phrase process on a large vocabulary;
// this reads each byte once.
std::optional<Vocabulary::Packed> plain_words(std::string_view text) {
  const char* p = text.data();
  const char* const end = p + text.size();
  auto skip_space = [&] {
    while (p < end && json_scan::is_space(*p)) ++p;
  };
  Vocabulary::Packed words;
  words.chars.reserve(text.size());
  words.ends.reserve(text.size() / 8);  // a word of 5 letters, quotes and comma
  skip_space();
  if (p == end || *p != '[') return std::nullopt;
  ++p;
  skip_space();
  bool closed = p < end && *p == ']';
  if (closed) ++p;
  while (!closed && p < end && *p == '"') {
    const size_t begin = words.chars.size();
    const char* run = ++p;  // bytes copied as they are, up to an escape or the end quote
    bool ascii = true;
    while (true) {
      while (p < end && *p != '"' && *p != '\\' && static_cast<unsigned char>(*p) >= 0x20) {
        ascii = ascii && static_cast<unsigned char>(*p) < 0x80;
        ++p;
      }
      if (p + 1 >= end || (*p != '"' && *p != '\\')) return std::nullopt;
      words.chars.append(run, static_cast<size_t>(p - run));
      if (*p++ == '"') break;
      if (*p != '"' && *p != '\\') return std::nullopt;  // another escape
      words.chars += *p++;
      run = p;
    }
    if (!ascii && !is_valid_utf8(std::string_view(words.chars).substr(begin))) return std::nullopt;
    words.ends.push_back(static_cast<uint32_t>(words.chars.size()));
    skip_space();
    closed = p < end && *p == ']';
    if (!closed && (p == end || *p != ',')) return std::nullopt;
    ++p;
    skip_space();
  }
  if (!closed) return std::nullopt;  // an element that is not a string
  skip_space();
  if (p != end) return std::nullopt;
  return words;
}

}  // namespace

Vocabulary read_vocabulary(const FileBytes& file) {
  if (file.size() == 0) throw model_error(file.path(), "", "the file is empty");
  if (std::optional<Vocabulary::Packed> words = plain_words(file.text())) {
    return Vocabulary::from_packed(std::move(*words), file.path());
  }
  size_t offset = 0;
  if (const std::optional<json_scan::Node> skeleton = json_scan::scan(file.text(), &offset)) {
    if (std::optional<std::string> word = json_scan::first_duplicate(*skeleton)) {
      throw model_error(file.path(), *word, "appears twice in the object (words must be unique)");
    }
  }
  const json vocab = json_scan::parse_small(file.text(), file.path(), "", kMaxVocabBytes);
  return Vocabulary::from_json(vocab, file.path());
}

namespace {

int special_id(const Vocabulary& vocab, const std::string& token, const std::string& vocab_file,
               const std::string& weights_file, const std::string& field) {
  const int id = vocab.find(token);
  if (id < 0) {
    throw model_error(vocab_file, "",
                      "has no entry for " + field + " \"" + token + "\" named in " + weights_file);
  }
  return id;
}

}  // namespace

std::shared_ptr<const SubwordTokenizer> subword_tokenizer(const Vocabulary& vocab,
                                                          const Weights& weights,
                                                          const std::string& file) {
  SubwordPieces pieces;
  pieces.pieces = vocab.words();
  const float* scores = weights.piece_scores;
  pieces.scores.assign(scores, scores + vocab.size());
  for (const std::string& piece : pieces.pieces) {
    pieces.max_piece_length = std::max(pieces.max_piece_length, static_cast<int>(piece.size()));
  }
  return std::make_shared<const SubwordTokenizer>(std::move(pieces), file);
}

ModelPaths ModelPaths::in_directory(const std::string& dir) {
  const std::filesystem::path base(dir);
  std::error_code ec;
  if (std::filesystem::is_regular_file(base, ec)) return {"", dir, ""};  // a model of one file
  const bool binary = std::filesystem::is_regular_file(base / "weights.safetensors", ec);
  const bool memory = std::filesystem::exists(base / "memory.bin", ec);
  return {(base / "vocab.json").string(),
          (base / (binary ? "weights.safetensors" : "weights.json")).string(),
          memory ? (base / "memory.bin").string() : std::string()};
}

Model load_model(const ModelPaths& paths) {
  const WeightsFormat format = weights_format(paths.weights);  // one look at the file's start
  if (format == WeightsFormat::kGguf) return gguf_model(paths.weights);
  WeightsFile w = read_weights(paths.weights, format);
  const std::string& wf = paths.weights;
  // vocab.bin when fresh (model/vocab_index.h), else vocab.json itself.
  std::optional<IndexedVocabulary> indexed = fresh_vocab_index(paths.vocab);
  if (!indexed) {
    const auto vocab_start = [](const std::string& file, std::string_view first) {
      check_json_start(file, first, "[{");
    };
    const std::shared_ptr<FileBytes> vocab_file =
        FileBytes::open(paths.vocab, FileLimits{kMaxVocabBytes, "a vocab.json", vocab_start});
    indexed = IndexedVocabulary{read_vocabulary(*vocab_file), vocab_file->size()};
  }
  Vocabulary& vocab = indexed->vocab;
  if (vocab.size() != w.config.vocab_size) {
    throw model_error(paths.vocab, "",
                      "has " + std::to_string(vocab.size()) + " words, " + wf +
                          " config.vocab_size is " + std::to_string(w.config.vocab_size));
  }
  const int unk = special_id(vocab, w.config.unk_token, paths.vocab, wf, "unk_token");
  const int bos =
      w.config.has_bos() ? special_id(vocab, w.config.bos_token, paths.vocab, wf, "bos_token") : -1;
  Model m{paths,
          static_cast<int64_t>(indexed->json_bytes),
          w.bytes,
          std::move(w.config),
          std::move(vocab),
          std::move(w.weights),
          unk,
          bos,
          nullptr,
          nullptr,
          nullptr};
  if (m.config.subword()) m.subword = subword_tokenizer(m.vocab, m.weights, paths.vocab);
  if (!paths.memory.empty()) m.memory = Memory::open(paths.memory, m.vocab);
  return m;
}

}  // namespace nextword
