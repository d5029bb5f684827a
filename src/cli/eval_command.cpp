// nextword eval: how well a model predicts the words of a text.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/threading.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/progress.h"
#include "complete/keystrokes.h"
#include "predict/evaluate.h"
#include "text/documents.h"

namespace nextword::cli {
namespace {

struct EvalCommand {
  ModelOptions model;
  std::vector<std::string> files;
  std::string format = "text";
  bool ksr = false;
  CompletionOptions completion;

  void add_to(CLI::App& c) {
    model.add_to(c);
    c.add_option("text", files, "Text files to score (documents as for train)")->required();
    c.add_flag("--ksr", ksr,
               "Keystroke savings instead: type the text with `complete`'s suggestions (-k, "
               "--no-repeat, --learn, --history, --lexicon as for complete)");
    completion.add_to(c);
    c.add_option("-f,--format", format, "Output: text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  }

  int run() const {
    // Keystroke savings runs one context per forward pass: too small a
    // product to split over threads.
    set_threading(Threading::kRows, ksr ? 1 : available_cores());
    const Model m = model.load();
    if (ksr) return keystroke_savings(m);
    const std::vector<Document> documents = read_documents(files, m.config.tokenizer);
    Progress progress;
    int64_t last_shown = -1;
    auto show = [&](int64_t done, int64_t total) {
      // A bar on a terminal only: logs get the result, not the journey.
      if (!progress.live() || total < 2000 || done - last_shown < total / 200) return;
      last_shown = done;
      char text[80];
      std::snprintf(text, sizeof text, "%lld/%lld positions", static_cast<long long>(done),
                    static_cast<long long>(total));
      progress.update(static_cast<double>(done) / static_cast<double>(total), text, {});
    };
    const EvalResult r = evaluate(m, documents, show);
    progress.finish();
    if (format == "json") {
      nlohmann::ordered_json j = {
          {"documents", r.documents},         {"tokens", r.tokens},
          {"unknown_rate", r.unknown_rate()}, {"cross_entropy", r.cross_entropy},
          {"perplexity", r.perplexity()},     {"top1", r.top1_accuracy()},
          {"top5", r.top5_accuracy()}};
      write_line(j.dump());
      return 0;
    }
    char text[400];
    std::snprintf(text, sizeof text,
                  "documents      %lld\ntokens         %lld\nunknown        %.2f%%\n"
                  "cross-entropy  %.4f nats\nperplexity     %.2f\ntop-1          %.4f\n"
                  "top-5          %.4f",
                  static_cast<long long>(r.documents), static_cast<long long>(r.tokens),
                  100 * r.unknown_rate(), r.cross_entropy, r.perplexity(), r.top1_accuracy(),
                  r.top5_accuracy());
    write_line(text);
    return 0;
  }

  int keystroke_savings(const Model& m) const {
    std::string text;
    for (const std::string& file : files) text += read_text_file(file) + "\n";
    const std::optional<Lexicon> lexicon = completion.load_lexicon(m.paths);
    Completer completer = completion.make_completer(m, lexicon ? &*lexicon : nullptr);
    std::vector<double> ms;
    const KeystrokeCount k =
        simulate_typing(text, completer, [&ms](double seconds) { ms.push_back(seconds * 1e3); });
    const CompleteOptions& o = completer.options();
    if (format == "json") {
      nlohmann::ordered_json j = {
          {"words", k.words},
          {"selected", k.selected},
          {"queries", k.queries},
          {"ki", k.ki},
          {"ks", k.ks},
          {"kn", k.kn},
          {"ksr", k.ksr()},
          {"k", o.k},
          {"no_repeat", o.no_repeat},
          {"learn", o.learn},
          {"forward_passes", completer.forward_passes()},
          {"keystroke_ms",
           {{"median", quantile(ms, 0.5)}, {"p90", quantile(ms, 0.9)}, {"max", quantile(ms, 1)}}}};
      write_line(j.dump());
      return 0;
    }
    char line[600];
    std::snprintf(line, sizeof line,
                  "words          %lld (%lld selected from the suggestions)\n"
                  "keystrokes     %lld typed + %lld selections, %lld without suggestions\n"
                  "KSR            %.4f (k %d%s%s)\n"
                  "per keystroke  median %.3f ms, p90 %.3f ms (%lld suggestion lists, %d forward "
                  "passes)",
                  static_cast<long long>(k.words), static_cast<long long>(k.selected),
                  static_cast<long long>(k.ki), static_cast<long long>(k.ks),
                  static_cast<long long>(k.kn), k.ksr(), o.k, o.learn ? ", learn" : "",
                  o.no_repeat ? ", no-repeat" : "", quantile(ms, 0.5), quantile(ms, 0.9),
                  static_cast<long long>(k.queries), completer.forward_passes());
    write_line(line);
    return 0;
  }
};

}  // namespace

CLI::App* add_eval_command(CLI::App& app, std::function<int()>& run) {
  return add_command<EvalCommand>(
      app, "eval",
      "Score a model on text: cross-entropy, perplexity, top-1 and top-5 accuracy; or keystroke "
      "savings (--ksr)",
      run);
}

}  // namespace nextword::cli
