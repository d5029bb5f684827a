// nextword generate: continue a phrase word by word.
#include <memory>

#include "base/threading.h"
#include "cli/commands.h"
#include "predict/generate.h"
#include "text/tokenizer.h"
#include "views/records.h"

namespace nextword::cli {
namespace {

struct GenerateCommand {
  ModelOptions model;
  std::vector<std::string> words;
  GenerateOptions options;
  std::string format = "text";
  int threads = 0;  // 0: every core
  bool greedy = false;

  void add_to(CLI::App& c) {
    model.add_to(c);
    c.add_option("phrase", words, "The phrase to continue")->required();
    c.add_option("-n,--max-words", options.max_words, "How many words to add")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    c.add_option("--temperature", options.temperature,
                 "0: the most likely word the repetition guard allows; above 0, sample from "
                 "softmax(logits / T)")
        ->check(CLI::Range(0.0, 100.0))
        ->capture_default_str();
    c.add_option("--top-k", options.top_k, "Sample among the k most likely words only (0: all)")
        ->check(CLI::Range(0, 1 << 24))
        ->capture_default_str();
    c.add_option("--top-p", options.top_p,
                 "Sample among the fewest most likely words whose probability reaches p")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    c.add_option("--no-repeat-ngram", options.guard.ngram,
                 "The repetition guard: no run of N words twice, prompt included (0: off)")
        ->check(CLI::Range(0, 64))
        ->capture_default_str();
    c.add_option("--presence-penalty", options.guard.penalty,
                 "The repetition guard: taken off the logit of each word already in the window "
                 "(0: off)")
        ->check(CLI::Range(0.0, 100.0))
        ->capture_default_str();
    c.add_option("--repeat-window", options.guard.window,
                 "The repetition guard looks back over the text's last N words (a subword "
                 "model's pieces)")
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
    c.add_flag("--greedy", greedy,
               "Plain greedy: always the most likely word, loops and all (no repetition guard; "
               "what run.c and llama.cpp at temperature 0 write)")
        ->excludes("--temperature", "--top-k", "--top-p", "--no-repeat-ngram", "--presence-penalty",
                   "--repeat-window");
    c.add_option("--seed", options.seed, "Sampling seed: the same seed gives the same text")
        ->capture_default_str();
    c.add_option("-f,--format", format, "Output: text, or json with the words")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    c.add_option("-t,--threads", threads,
                 "Threads (default: every core); each next word's products are shared")
        ->check(CLI::Range(1, 1024));
  }

  int run() const {
    // One row a step: the threads share each product's columns (the same
    // bits as one thread).
    set_threading(Threading::kRows, threads > 0 ? threads : available_cores());
    const Model m = model.load();
    Predictor predictor(m);
    const std::string phrase = join(words);
    GenerateOptions o = options;
    if (greedy) o.guard = RepetitionGuard::off();
    const std::vector<int> ids = generate(predictor, encode(m, phrase), o);
    write_line(
        views::generate_record(views::generated(m, phrase, ids),
                               format == "json" ? views::Format::kJson : views::Format::kText));
    return 0;
  }
};

}  // namespace

CLI::App* add_generate_command(CLI::App& app, std::function<int()>& run) {
  return add_command<GenerateCommand>(
      app, "generate",
      "Continue a phrase word by word (greedy, or sampled with a temperature, top-k, top-p), "
      "by default never repeating a run of 4 words",
      run);
}

}  // namespace nextword::cli
