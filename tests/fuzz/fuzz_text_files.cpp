// libFuzzer: the readers of text files, fed through a real pipe as
// `--history <(...)` or `eval <(...)` would be (/dev/fd/N): read_text_file
// with split_documents (train, eval, score --document) and the history file
// that `complete` and `type` learn from. The first byte picks the reader.
//
// A text with a NUL byte must be refused (exit 4) naming the byte of the
// first one; any other text must come back byte for byte, its documents
// holding exactly the words of its lines. A history is learned or refused
// with an input error naming its line; nothing else may be thrown.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "cli/completion.h"
#include "stdin_pipe.h"
#include "text/documents.h"
#include "text/tokenizer.h"

namespace {

const nextword::Model& fruit() {
  static const nextword::Model model =
      nextword::load_model(nextword::ModelPaths::in_directory(NEXTWORD_FRUIT_DIR));
  return model;
}

// The words of the lines that are not document separators ("<|endoftext|>"
// between blanks), counted apart from split_documents.
size_t words_in(const std::string& text, const nextword::TokenizerOptions& options) {
  size_t words = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line = std::string_view(text).substr(start, end - start);
    const size_t first = line.find_first_not_of(" \t\r\n\v\f");
    const size_t last = line.find_last_not_of(" \t\r\n\v\f");
    if (first == std::string_view::npos ||
        line.substr(first, last - first + 1) != "<|endoftext|>") {
      words += nextword::tokenize(line, options).size();
    }
    start = end + 1;
  }
  return words;
}

void read_text(const std::string& input, const std::string& path) {
  const size_t nul = input.find('\0');
  std::string text;
  try {
    text = nextword::read_text_file(path);
  } catch (const nextword::Error& e) {
    if (nul == std::string::npos || e.code() != nextword::ExitCode::kInput ||
        e.message() != path + ": byte " + std::to_string(nul) + ": a NUL byte: not a text file") {
      __builtin_trap();
    }
    return;
  }
  if (nul != std::string::npos || text != input) __builtin_trap();
  const nextword::TokenizerOptions options;
  std::vector<nextword::Document> documents;
  nextword::split_documents(text, options, documents);
  size_t words = 0;
  for (const auto& d : documents) {
    if (d.empty()) __builtin_trap();
    words += d.size();
  }
  if (words != words_in(text, options)) __builtin_trap();
}

void read_history(const std::string& path) {
  nextword::cli::CompletionOptions completion;
  completion.history = path;
  try {
    (void)completion.make_completer(fruit(), nullptr);
  } catch (const nextword::Error& e) {
    if (e.code() != nextword::ExitCode::kInput || e.message().rfind(path + ":", 0) != 0) {
      __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 60000) return -1;  // the input must fit the pipe
  const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const int fd = nextword::fuzz::pipe_holding(input);
  const std::string path = "/dev/fd/" + std::to_string(fd);
  if ((data[0] & 1) == 0) {
    read_text(input, path);
  } else {
    read_history(path);
  }
  ::close(fd);
  return 0;
}
