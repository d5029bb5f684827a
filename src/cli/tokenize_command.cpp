// nextword tokenize [TEXT]: the ids of a text's tokens as the model reads
// them, without the bos token it puts before a phrase (as llama.cpp's
// tokenizer tests list them), one line a text; with no TEXT, each line of
// standard input. A GGUF file's vocabulary alone is enough (a
// vocabulary-only file). With --join, the tokens written back as text, as
// `generate` writes them, so that the round trip can be checked.
#include <nlohmann/json.hpp>
#include <utility>

#include "cli/commands.h"
#include "cli/line_reader.h"
#include "format/gguf.h"
#include "model/gguf_vocabulary.h"
#include "model/weights_file.h"
#include "predict/predictor.h"
#include "text/tokenizer.h"
#include "views/records.h"

namespace nextword::cli {
namespace {

struct TokenizeCommand {
  ModelOptions model;
  std::vector<std::string> words;
  std::string format = "text";
  bool join = false;

  void add_to(CLI::App& c) {
    model.add_to(c);
    c.add_option("text", words, "The text (no text: each line of stdin)");
    c.add_option("-f,--format", format,
                 "Output: text (the ids, space-separated) or json ({\"ids\", \"pieces\"})")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    c.add_flag("--join", join,
               "Print the tokens joined back into text as generate writes them (unknown words "
               "as spelled), not their ids")
        ->excludes("--format");
  }

  int run() const {
    const ModelPaths paths = model.paths();
    // The ids of a text and the vocabulary that spells them.
    std::function<std::vector<int>(const std::string&)> encode;
    std::function<std::string_view(int)> spelling;
    // The text of a line's tokens, as `generate` writes them.
    std::function<std::string(const std::string&)> joined;
    // A model of pieces writes its pieces' bytes (views::generated).
    auto pieces_text = [&](const PieceTokenizer& pieces, const std::string& text) {
      std::string out;
      int previous = -1;
      for (const int id : encode(text)) out += pieces.decode(std::exchange(previous, id), id);
      return out;
    };
    std::optional<GgufVocabulary> gguf;
    std::optional<Model> loaded;
    if (paths.vocab.empty() && weights_format(paths.weights) == WeightsFormat::kGguf) {
      gguf = gguf_vocabulary(*GgufFile::open(paths.weights));
      encode = [&](const std::string& text) { return gguf->tokenizer->encode(text); };
      spelling = [&](int id) { return gguf->vocab.word(id); };
      joined = [&](const std::string& text) { return pieces_text(*gguf->tokenizer, text); };
    } else {
      loaded.emplace(load_model(paths));
      encode = [&](const std::string& text) {
        std::vector<int> ids = encode_text(*loaded, text).ids;
        if (!ids.empty() && ids.front() == loaded->bos_id) ids.erase(ids.begin());
        return ids;
      };
      spelling = [&](int id) { return loaded->vocab.word(id); };
      joined = [&](const std::string& text) {
        if (loaded->subword) return pieces_text(*loaded->subword, text);
        // The words as the tokenizer cuts them, unknown ones too, as they
        // are spelled (not the capitalized form a cased model may read a
        // lowercase word as): the joiner's round trip, nothing else.
        return views::written_text(*loaded, "", tokenize(text, loaded->config.tokenizer));
      };
    }
    auto write = [&](const std::string& text) {
      if (join) return write_line(joined(text));
      const std::vector<int> ids = encode(text);
      if (format == "json") {
        nlohmann::json pieces = nlohmann::json::array();
        for (const int id : ids) pieces.push_back(std::string(spelling(id)));
        write_line(nlohmann::json{{"ids", ids}, {"pieces", pieces}}.dump(
            -1, ' ', false, nlohmann::json::error_handler_t::replace));
        return;
      }
      std::string line;
      for (const int id : ids) {
        if (!line.empty()) line += ' ';
        line += std::to_string(id);
      }
      write_line(line);
    };
    if (!words.empty()) {
      std::string text;
      for (const std::string& w : words) text += (text.empty() ? "" : " ") + w;
      write(text);
      return 0;
    }
    LineReader input = LineReader::standard_input();
    std::string line;
    while (input.next(line)) write(line);
    return 0;
  }
};

}  // namespace

CLI::App* add_tokenize_command(CLI::App& app, std::function<int()>& run) {
  return add_command<TokenizeCommand>(
      app, "tokenize", "Print the ids of a text's tokens, as the model reads them", run);
}

}  // namespace nextword::cli
