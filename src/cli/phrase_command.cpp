#include "cli/phrase_command.h"

#include <unistd.h>

#include <exception>

#include "base/error.h"
#include "base/file_output.h"
#include "base/threading.h"
#include "cli/line_reader.h"
#include "predict/predictor.h"
#include "text/tokenizer.h"
#include "views/records.h"

namespace nextword::cli {

using namespace views;

void PhraseCommand::add_to(CLI::App& command) {
  model.add_to(command);
  command.add_option("phrase", words, "The phrase (no phrase: one per line from stdin)");
  command.add_option("-k,--top-k", options.top_k, "How many predictions to print")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  command.add_flag("-q,--quiet", options.quiet, "No notes on stderr (unknown words, truncation)");
  command
      .add_option("--batch", options.batch,
                  "Phrases from stdin predicted together, at most (lines already waiting; "
                  "a typed line is answered at once)")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  command.add_option("-t,--threads", threads, "Threads (default: every core)")
      ->check(CLI::Range(1, 1024));
}

int PhraseCommand::run() {
  set_threading(Threading::kRows, threads > 0 ? threads : available_cores());
  options.format = format == "json"  ? Format::kJson
                   : format == "tsv" ? Format::kTsv
                                     : Format::kText;
  if (options.explain && options.format == Format::kTsv) {
    throw Error(ExitCode::kUsage, "--explain needs --format text or json");
  }
  const Model m = model.load();
  if (options.attention) choose_view(m.config);
  Predictor predictor(m);
  // The attention views show the transformer's own predictions.
  if (options.attention) predictor.set_mixing(false);
  std::string written;  // with -o: the records, for the file
  const RecordSink sink{[&](const std::string& record) {
                          if (output.empty()) {
                            write_line(record);
                          } else {
                            written += record + "\n";
                          }
                        },
                        report};
  int status = 0;
  if (!words.empty()) {
    const std::string phrase = join(words);
    write_prediction(m, phrase,
                     predictor.predict(phrase, options.top_k, options.attention || options.explain),
                     "", options, sink);
  } else {
    LineReader input = LineReader::standard_input();
    status = stream_records(m, predictor, input, options, sink);
  }
  if (!output.empty()) write_file_atomically(output, written);
  return status;
}

void PhraseCommand::choose_view(const Config& c) {
  options.view = format == "text"      ? View::kText
                 : format == "svg"     ? View::kSvg
                 : format == "html"    ? View::kHtml
                 : format == "bertviz" ? View::kBertviz
                                       : View::kJson;
  const bool picture = options.view == View::kSvg || options.view == View::kHtml;
  if (picture && words.empty()) {
    throw Error(ExitCode::kUsage, "--format " + format + " draws one phrase: give it as PHRASE");
  }
  auto pick = [](const std::string& value, int count, const char* what) {
    if (value == "mean") return -1;
    int n = 0;
    try {
      n = std::stoi(value);
    } catch (const std::exception&) {
      n = 0;
    }
    if (n < 1 || n > count || std::to_string(n) != value) {
      throw Error(ExitCode::kUsage, std::string("--") + what + ": " + value +
                                        " is not \"mean\" or a number from 1 to " +
                                        std::to_string(count));
    }
    return n - 1;
  };
  if (options.view == View::kText || options.view == View::kSvg) {
    if (c.n_layers == 0) throw Error(ExitCode::kUsage, "this model has no attention layers");
    options.choice.layer =
        pick(layer.empty() ? std::to_string(c.n_layers) : layer, c.n_layers, "layer");
    options.choice.head = pick(head, c.n_heads, "head");
  }
  options.color = color == "never" ? Color::kNone
                  : color == "always"
                      ? (terminal_color() == Color::kTrue ? Color::kTrue : Color::k256)
                  : output.empty() ? terminal_color()
                                   : Color::kNone;
}

}  // namespace nextword::cli
