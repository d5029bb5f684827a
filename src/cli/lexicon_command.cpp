// nextword lexicon: writes lexicon.bin, the index of a model's lexicon.tsv
// that `complete`, `type`, `lsp` and `serve` map instead of parsing the text
// at every start (model/lexicon_index.h; data/FORMAT.md, "The lexicon index"),
// and beside the model vocab.bin, its vocabulary's (model/vocab_index.h).
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/file_output.h"
#include "cli/commands.h"
#include "model/lexicon_index.h"
#include "model/vocab_index.h"

namespace nextword::cli {
namespace {

struct LexiconCommand {
  ModelOptions model;
  std::string input, output, format = "text";

  void add_to(CLI::App& c) {
    model.add_to(c);
    c.add_option("--lexicon", input, "lexicon.tsv to index (default: the one beside vocab.json)")
        ->type_name("FILE");
    c.add_option("-o,--output", output,
                 "File to write (default: lexicon.bin beside vocab.json, with vocab.bin)")
        ->type_name("FILE");
    c.add_option("-f,--format", format, "Summary on stdout: text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  }

  int run() {
    ModelOptions vocabulary_only = model;
    vocabulary_only.no_memory = true;  // the index reads the vocabulary alone
    const Model m = vocabulary_only.load();
    const std::filesystem::path dir = std::filesystem::path(m.paths.vocab).parent_path();
    if (input.empty()) input = (dir / "lexicon.tsv").string();
    // Beside the model, its vocabulary's index too (model/vocab_index.h).
    const bool beside_model = output.empty();
    if (beside_model) output = (dir / "lexicon.bin").string();
    const Lexicon lexicon = read_lexicon(input);
    LexiconIndexSource source = LexiconIndexSource::of(m);
    struct stat info {};
    // The size of the lexicon.tsv it indexes, which the model's own lexicon.bin
    // must match to be read in its place.
    if (::stat(input.c_str(), &info) == 0 && S_ISREG(info.st_mode)) {
      source.lexicon_bytes = static_cast<uint64_t>(info.st_size);
    }
    const std::string bytes = LexiconIndex::bytes_of(lexicon, source);
    write_file_atomically(output, bytes);
    const std::string vocab_bin = (dir / "vocab.bin").string();
    if (beside_model) {
      write_file_atomically(vocab_bin,
                            vocab_index_bytes(m.vocab, static_cast<uint64_t>(m.vocab_file_bytes)));
    }
    // The summary from the bytes just written, not from a second build.
    const LexiconIndex index = *LexiconIndex::from_bytes(output, bytes, source);
    if (format == "json") {
      write_line(nlohmann::ordered_json{{"file", output},
                                        {"bytes", bytes.size()},
                                        {"lexicon_words", lexicon.entries.size()},
                                        {"offered_words", index.size()},
                                        {"oov_count", index.oov_count()},
                                        {"vocab_index", beside_model ? vocab_bin : ""}}
                     .dump());
    } else {
      write_line(output + ": " + std::to_string(index.size()) + " of the lexicon's " +
                 std::to_string(lexicon.entries.size()) + " words offered beyond the vocabulary, " +
                 std::to_string(bytes.size()) + " bytes" +
                 (beside_model ? "; " + vocab_bin + ": the vocabulary's index" : ""));
    }
    return 0;
  }
};

}  // namespace

CLI::App* add_lexicon_command(CLI::App& app, std::function<int()>& run) {
  return add_command<LexiconCommand>(
      app, "lexicon",
      "Index the model's lexicon.tsv into lexicon.bin, which complete, type, lsp and serve map "
      "at start, and its vocab.json into vocab.bin, which every command maps",
      run);
}

}  // namespace nextword::cli
