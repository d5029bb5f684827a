#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/error.h"
#include "base/file_output.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "text/utf8.h"

namespace nextword::cli {

void ModelOptions::add_to(CLI::App& command) {
  auto* model = command.add_option("-m,--model", dir,
                                   std::string("A model's name (see `nextword models`), a "
                                               "directory holding vocab.json and "
                                               "weights.safetensors or weights.json, a GGUF "
                                               "file, or ollama:NAME[:TAG], a model ollama has "
                                               "pulled (default: $NEXTWORD_MODEL, else ") +
                                       kDefaultModel + ")");
  auto* v = command.add_option("--vocab", vocab, "vocab.json to use (with --weights)");
  auto* w = command.add_option("--weights", weights,
                               "weights.json or .safetensors to use (with --vocab)");
  v->needs(w);
  w->needs(v);
  model->excludes(v)->excludes(w);
  command.add_flag("--no-memory", no_memory,
                   "The transformer alone: leave out the memory of the training text "
                   "(memory.bin beside the model's vocab.json)");
}

ModelPaths ModelOptions::paths() const {
  if (!vocab.empty()) return {vocab, weights, ""};
  ModelPaths paths = ModelPaths::in_directory(model_directory(dir));
  if (no_memory) paths.memory.clear();
  return paths;
}

void write_line(const std::string& line) {
  // One record, one write: a reader never sees half of it unless the system
  // refuses the rest, and then the run stops here.
  std::string record;
  record.reserve(line.size() + 1);
  record.append(line).push_back('\n');
  if (!write_all(STDOUT_FILENO, record)) {
    throw Error(ExitCode::kIo,
                std::string("standard output: cannot write: ") + std::strerror(errno));
  }
}

void report(const std::string& message) {
  std::string line = "nextword: " + escape_bytes(message);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

CLI::Option* StrideOption::add_to(CLI::App& command) {
  return command
      .add_option("--stride", stride,
                  "Tokens between the starts of the scoring windows past a text's first max_len "
                  "words: each word is read after max_len - N + 1 to max_len words before it "
                  "(default: half of max_len; 1: every word after max_len, word by word)")
      ->check(CLI::Range(1, 1 << 20))
      ->type_name("N");
}

int StrideOption::of(const Model& model) const {
  return stride > 0 ? stride : std::max(1, model.config.max_len / 2);
}

}  // namespace nextword::cli
