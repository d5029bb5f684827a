#include "model/model_file.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "model/json_scan.h"
#include "model/weights_file.h"

namespace nextword {
namespace {

// 2^24 words (the most a config allows) of a few bytes each fit in 256 MiB.
constexpr size_t kMaxVocabBytes = size_t{256} << 20;

using nlohmann::json;

// The words of `text`, JSON that json_scan validated, when it is an array
// of strings with no escape but \" and \\ (what `train` writes); else
// nullopt, for nlohmann's DOM to read (and to name what is wrong). A
// 65,536-word DOM was a sixth of a one-phrase process.
std::optional<std::vector<std::string>> plain_words(std::string_view text) {
  size_t at = 0;
  auto skip_space = [&] {
    while (at < text.size() && json_scan::is_space(text[at])) ++at;
  };
  skip_space();
  if (at == text.size() || text[at] != '[') return std::nullopt;
  ++at;
  std::vector<std::string> words;
  skip_space();
  if (at < text.size() && text[at] == ']') return words;
  while (at < text.size() && text[at] == '"') {
    std::string& word = words.emplace_back();
    for (size_t end = text.find_first_of("\\\"", ++at);; end = text.find_first_of("\\\"", at)) {
      if (end == std::string_view::npos || end + 1 >= text.size()) return std::nullopt;
      word.append(text.substr(at, end - at));
      at = end + 1;
      if (text[end] == '"') break;
      if (text[at] != '"' && text[at] != '\\') return std::nullopt;  // another escape
      word += text[at++];
    }
    skip_space();
    if (at < text.size() && text[at] == ']') return words;
    if (at == text.size() || text[at] != ',') return std::nullopt;
    ++at;
    skip_space();
  }
  return std::nullopt;  // an element that is not a string
}

}  // namespace

Vocabulary read_vocabulary(const FileBytes& file) {
  if (file.size() == 0) throw model_error(file.path(), "", "the file is empty");
  size_t offset = 0;
  if (const std::optional<json_scan::Node> skeleton = json_scan::scan(file.text(), &offset)) {
    if (std::optional<std::string> word = json_scan::first_duplicate(*skeleton)) {
      throw model_error(file.path(), *word, "appears twice in the object (words must be unique)");
    }
    if (std::optional<std::vector<std::string>> words = plain_words(file.text())) {
      return Vocabulary::from_words(std::move(*words), file.path());
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

ModelPaths ModelPaths::in_directory(const std::string& dir) {
  const std::filesystem::path base(dir);
  std::error_code ec;
  const bool binary = std::filesystem::is_regular_file(base / "weights.safetensors", ec);
  return {(base / "vocab.json").string(),
          (base / (binary ? "weights.safetensors" : "weights.json")).string()};
}

Model load_model(const ModelPaths& paths) {
  WeightsFile w = read_weights(paths.weights);
  const std::string& wf = paths.weights;
  const auto vocab_start = [](const std::string& file, std::string_view first) {
    check_json_start(file, first, "[{");
  };
  const std::shared_ptr<FileBytes> vocab_file =
      FileBytes::open(paths.vocab, FileLimits{kMaxVocabBytes, "a vocab.json", vocab_start});
  Vocabulary vocab = read_vocabulary(*vocab_file);
  if (vocab.size() != w.config.vocab_size) {
    throw model_error(paths.vocab, "",
                      "has " + std::to_string(vocab.size()) + " words, " + wf +
                          " config.vocab_size is " + std::to_string(w.config.vocab_size));
  }
  const int unk = special_id(vocab, w.config.unk_token, paths.vocab, wf, "unk_token");
  const int bos =
      w.config.has_bos() ? special_id(vocab, w.config.bos_token, paths.vocab, wf, "bos_token") : -1;
  return Model{paths,
               static_cast<int64_t>(vocab_file->size()),
               w.bytes,
               std::move(w.config),
               std::move(vocab),
               std::move(w.weights),
               unk,
               bos};
}

}  // namespace nextword
