#include "cli/completion.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "base/bounded_read.h"
#include "base/error.h"
#include "complete/settings.h"
#include "text/utf8.h"

namespace nextword::cli {
namespace {

// What a pipe or a device brings as history (process substitution): at most
// kMaxHistoryBytes, a NUL byte refused where it comes (it is never text, and
// /dev/zero never ends).
std::string read_history_stream(const std::string& path, int fd) {
  std::string text;
  const ReadEnd end =
      read_bounded(fd, kMaxHistoryBytes, text, [&](const std::string& all, std::string_view fresh) {
        const size_t at = fresh.find('\0');
        if (at == std::string_view::npos) return;
        const size_t offset = all.size() - fresh.size() + at;
        const auto line =
            std::count(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(offset), '\n') + 1;
        throw Error(ExitCode::kInput,
                    path + ":" + std::to_string(line) + ": holds a control character (NUL)");
      });
  if (end == ReadEnd::kFailed) {
    throw Error(ExitCode::kIo, path + ": cannot read: " + std::strerror(errno));
  }
  if (end == ReadEnd::kTooLarge) {
    throw Error(ExitCode::kInput, path + ": larger than " + std::to_string(kMaxHistoryBytes >> 20) +
                                      " MiB, the most a history pipe may bring");
  }
  return text;
}

// The end of a history file, at most kMaxHistoryBytes from a line start;
// an absent file is an empty history (`type` creates it).
std::string read_history(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  const FileDescriptor file = open_text_file(path);
  const int fd = file.fd;
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) return read_history_stream(path, fd);
  const auto size = static_cast<size_t>(info.st_size);
  const bool cut = size > kMaxHistoryBytes;
  const size_t from = cut ? size - kMaxHistoryBytes : 0;
  std::string text(size - from, '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n =
        ::pread(fd, text.data() + done, text.size() - done, static_cast<off_t>(from + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(ExitCode::kIo, path + ": cannot read: " + std::strerror(errno));
    if (n == 0) break;  // it shrank meanwhile: what is there
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  if (cut) text.erase(0, std::min(text.size(), text.find('\n') + 1));  // from a whole line on
  return text;
}

// A history is text: UTF-8 without control characters but tab and line ends.
void check_history(const std::string& path, const std::string& text) {
  size_t line = 1, start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != '\n') continue;
    const std::string_view content(text.data() + start, i - start);
    auto fail = [&](const std::string& what) {
      return Error(ExitCode::kInput, path + ":" + std::to_string(line) + ": " + what);
    };
    if (!is_valid_utf8(content)) throw fail("not valid UTF-8");
    for (const char c : content) {
      if (is_control(c) && c != '\t' && c != '\r') {
        throw fail("holds a control character (a history file is plain text)");
      }
    }
    ++line;
    start = i + 1;
  }
}

}  // namespace

std::string read_history_text(const std::string& path) {
  std::string text = read_history(path);
  check_history(path, text);
  return text;
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  const auto at =
      values.begin() + static_cast<std::ptrdiff_t>(q * static_cast<double>(values.size() - 1));
  std::nth_element(values.begin(), at, values.end());
  return *at;
}

void CompletionOptions::add_to(CLI::App& command) {
  struct AddOption {
    CLI::App& command;
    void whole(const char* flags, const char*, int& value, int low, int high, const char* help) {
      command.add_option(flags, value, help)->check(CLI::Range(low, high))->capture_default_str();
    }
    void flag(const char* flags, const char*, bool& value, const char* help) {
      command.add_flag(flags, value, help);
    }
    void number(const char* flags, const char*, double& value, double low, double high,
                const char* help) {
      command.add_option(flags, value, help)->check(CLI::Range(low, high))->capture_default_str();
    }
  };
  visit_complete_options(options, AddOption{command});
  command.add_option("--history", history,
                     "Plain-text file of earlier writing, learned at start (implies --learn)");
  command.add_option("--lexicon", lexicon,
                     "Words outside the vocabulary with their counts (default: lexicon.tsv "
                     "beside vocab.json, when there)");
}

std::optional<Lexicon> CompletionOptions::load_lexicon(const ModelPaths& paths) const {
  if (!lexicon.empty()) return read_lexicon(lexicon);
  return read_lexicon_beside(paths.vocab);
}

std::optional<LexiconIndex> CompletionOptions::load_lexicon_index(const Model& model) const {
  const LexiconIndexSource source = LexiconIndexSource::of(model);
  if (!lexicon.empty()) return LexiconIndex::build(read_lexicon(lexicon), source);
  if (model.paths.vocab.empty()) return std::nullopt;
  return LexiconIndex::beside(model.paths.vocab, source);
}

Completer CompletionOptions::make_completer(const Model& model,
                                            const LexiconIndex* lexicon_of) const {
  CompleteOptions o = options;
  if (!history.empty()) o.learn = true;
  if (const std::string problem = complete_options_problem(o, "--"); !problem.empty()) {
    throw Error(ExitCode::kUsage, problem);
  }
  Completer completer(model, lexicon_of, o);
  if (!history.empty()) completer.learn(read_history_text(history));
  return completer;
}

void stream_completions(Completer& completer, LineReader& input, views::Format format, bool notes,
                        int batch, const RecordSink& sink) {
  std::vector<std::string> lines;
  std::vector<char> cuts;
  long number = 0;
  while (input.next_batch(lines, cuts, batch)) {
    completer.prefetch(lines);
    for (size_t i = 0; i < lines.size(); ++i) {
      ++number;
      if (cuts[i] && notes) {
        sink.report("<stdin>:" + std::to_string(number) + ": " + LineReader::kCutNote);
      }
      sink.record(views::completion_record(lines[i], completer.complete(lines[i]), format));
    }
  }
}

}  // namespace nextword::cli
