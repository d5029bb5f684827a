// nextword lens | trace | attribute PHRASE: the whole computation behind a
// prediction (inspect/), one record per phrase, from the arguments or one
// phrase per stdin line as `predict` reads them.
#include <unistd.h>

#include <memory>

#include "base/error.h"
#include "base/threading.h"
#include "cli/commands.h"
#include "cli/line_reader.h"
#include "predict/predictor.h"
#include "text/tokenizer.h"
#include "views/inspect_records.h"
#include "views/records.h"

namespace nextword::cli {

using namespace views;
namespace {

using views::Look;

struct InspectCommand {
  Look look = Look::kLens;
  ModelOptions model;
  std::vector<std::string> words;
  std::string format = "text";
  bool quiet = false;
  int threads = 0;
  views::LookOptions options;
  std::string word;  // attribute: --word

  void add_to(CLI::App& command) {
    model.add_to(command);
    command.add_option("phrase", words, "The phrase (no phrase: one per line from stdin)");
    command.add_flag("-q,--quiet", quiet, "No notes on stderr (unknown words, truncation)");
    command.add_option("-t,--threads", threads, "Threads (default: every core)")
        ->check(CLI::Range(1, 1024));
  }

  int run() {
    set_threading(Threading::kRows, threads > 0 ? threads : available_cores());
    const Model m = model.load();
    options.word = views::attribution_word(m, word, "--word");
    if (!words.empty()) {
      // As `predict PHRASE`: a bad phrase is an error, not a record.
      show(m, encode(m, join(words)), join(words));
      return 0;
    }
    LineReader input = LineReader::standard_input();
    std::string line;
    int status = 0;
    for (long number = 1; input.next(line); ++number) {
      if (!show_line(m, line, "<stdin>:" + std::to_string(number) + ": ")) status = 4;
    }
    return status;
  }

  // Writes the record of a stdin line (or its error record); false on a bad phrase.
  bool show_line(const Model& m, const std::string& line, const std::string& where) const {
    Encoded input;
    try {
      input = encode(m, line);
    } catch (const Error& e) {
      if (e.code() != ExitCode::kInput) throw;
      report(where + e.message());
      write_line(error_record(line, e, json() ? Format::kJson : Format::kText));
      return false;
    }
    show(m, std::move(input), line, where);
    return true;
  }

  bool json() const { return format == "json"; }

  void show(const Model& m, Encoded input, const std::string& phrase,
            const std::string& where = "") const {
    const Format f = json() ? Format::kJson : Format::kText;
    if (!quiet && f != Format::kJson && input.truncated) {
      report(where + "note: phrase cut to its last " + std::to_string(m.config.max_len) +
             " tokens (max_len)");
    }
    if (!quiet && f != Format::kJson && !input.unknown.empty()) {
      report(where + "note: not in the vocabulary: " + join(input.unknown));
    }
    write_line(views::look_record(m, look, phrase, std::move(input), options, f));
  }
};

// Registers one of the three looks.
CLI::App* add_look(CLI::App& app, std::function<int()>& run, Look look, const char* name,
                   const char* description, const char* default_format) {
  auto command = std::make_shared<InspectCommand>();
  command->look = look;
  command->format = default_format;
  CLI::App* c = app.add_subcommand(name, description);
  command->add_to(*c);
  c->add_option("-f,--format", command->format, "Output: text or json (JSON Lines)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  run = [command] { return command->run(); };
  if (look == Look::kLens) {
    c->add_option("-k,--top-k", command->options.top_k, "Words shown at each step")
        ->check(CLI::Range(1, 1 << 24))
        ->capture_default_str();
    c->add_flag("--mid", command->options.mid, "Also after each layer's attention block");
    c->add_flag("--all-positions", command->options.all_positions,
                "Every position of the phrase, not only the last");
  }
  if (look == Look::kTrace) {
    c->add_option("--only", command->options.only,
                  "Only the activations whose names match this shell glob (repeatable), "
                  "e.g. 'blocks.0.attn.*'")
        ->allow_extra_args(false);  // --only G PHRASE: the phrase is not a second glob
  }
  if (look == Look::kAttribute) {
    c->add_option("--word", command->word,
                  "The word whose logit is explained (default: the top prediction)");
  }
  return c;
}

}  // namespace

CLI::App* add_lens_command(CLI::App& app, std::function<int()>& run) {
  return add_look(app, run, Look::kLens, "lens",
                  "The logit lens: what the model would predict after the embedding and after "
                  "each layer",
                  "text");
}

CLI::App* add_trace_command(CLI::App& app, std::function<int()>& run) {
  return add_look(app, run, Look::kTrace, "trace",
                  "Every intermediate of the forward pass, named as TransformerLens names them",
                  "json");
}

CLI::App* add_attribute_command(CLI::App& app, std::function<int()>& run) {
  return add_look(app, run, Look::kAttribute, "attribute",
                  "Direct logit attribution: what the embeddings, each head and each "
                  "feed-forward block add to a word's logit",
                  "text");
}

}  // namespace nextword::cli
