// nextword eval: how well a model predicts the words of a text.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/threading.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "predict/evaluate.h"
#include "text/documents.h"

namespace nextword::cli {
namespace {

struct EvalCommand {
  ModelOptions model;
  std::vector<std::string> files;
  std::string format = "text";

  void add_to(CLI::App& c) {
    model.add_to(c);
    c.add_option("text", files, "Text files to score (documents as for train)")->required();
    c.add_option("-f,--format", format, "Output: text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  }

  int run() const {
    set_threading(Threading::kRows, available_cores());
    const Model m = model.load();
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
};

}  // namespace

CLI::App* add_eval_command(CLI::App& app, std::function<int()>& run) {
  return add_command<EvalCommand>(
      app, "eval", "Score a model on text: cross-entropy, perplexity, top-1 and top-5 accuracy",
      run);
}

}  // namespace nextword::cli
