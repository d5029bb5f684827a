// nextword complete TEXT: suggestions for the word being typed (or the next
// word), one record per text; from stdin, one text per line, as successive
// states of one typing session.
#include <unistd.h>

#include "base/threading.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "text/tokenizer.h"

namespace nextword::cli {
namespace {

struct CompleteCommand {
  ModelOptions model;
  CompletionOptions completion;
  std::vector<std::string> words;
  std::string format = "text";
  bool quiet = false;
  int threads = 1;
  int batch = 64;

  void add_to(CLI::App& c) {
    model.add_to(c);
    c.add_option("text", words,
                 "Everything typed so far; a word being typed at its end is completed (no "
                 "TEXT: one per line from stdin, whitespace at the end kept)");
    completion.add_to(c);
    c.add_option("-f,--format", format, "Output: text, tsv or json (JSON Lines)")
        ->check(CLI::IsMember({"text", "tsv", "json"}))
        ->capture_default_str();
    c.add_option("--batch", batch,
                 "Lines from stdin whose contexts run together, at most (lines already "
                 "waiting; a typed line is answered at once)")
        ->check(CLI::Range(1, 1 << 16))
        ->capture_default_str();
    c.add_flag("-q,--quiet", quiet, "No notes on stderr (a line cut to its last 64 KiB)");
    c.add_option("-t,--threads", threads,
                 "Threads (default 1: one context per forward pass is too small a product to "
                 "split)")
        ->check(CLI::Range(1, 1024));
  }

  int run() const {
    set_threading(Threading::kRows, threads);
    const Format f = format == "json"  ? Format::kJson
                     : format == "tsv" ? Format::kTsv
                                       : Format::kText;
    const Model m = model.load();
    const std::optional<LexiconIndex> lexicon = completion.load_lexicon_index(m);
    Completer completer = completion.make_completer(m, lexicon ? &*lexicon : nullptr);
    if (!words.empty()) {
      const std::string text = join(words);
      write_line(completion_record(text, completer.complete(text), f));
      return 0;
    }
    LineReader input = LineReader::standard_input();
    stream_completions(completer, input, f, !quiet && f != Format::kJson, batch,
                       RecordSink{write_line, report});
    return 0;
  }
};

}  // namespace

CLI::App* add_complete_command(CLI::App& app, std::function<int()>& run) {
  return add_command<CompleteCommand>(
      app, "complete",
      "Suggest words for predictive text: complete the word being typed, or the next word, "
      "written as the writer writes (a capital at a sentence start or after a typed one; "
      "curly apostrophes when the writer's last quote mark or apostrophe was curly)",
      run);
}

}  // namespace nextword::cli
