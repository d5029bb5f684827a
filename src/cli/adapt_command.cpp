// nextword adapt: a model of a person's own text, from an installed one
// (cli/adapt.h), with a progress bar and Ctrl-C keeping the steps done.
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "cli/adapt.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "cli/progress.h"
#include "cli/stop_signals.h"

namespace nextword::cli {
namespace {

struct AdaptCommand {
  AdaptOptions o;
  std::string model, name, format = "text";
  CLI::Option* output = nullptr;

  void add_to(CLI::App& c) {
    c.add_option("text", o.texts,
                 "The person's text files (a blank line or a line <|endoftext|> ends a "
                 "document)")
        ->required();
    c.add_option("-m,--model", model,
                 "The model to adapt: a directory, or an installed model's name (default: the "
                 "default model)");
    output = c.add_option("-o,--output", o.out_dir, "Directory to write the adapted model to");
    c.add_option("--name", name,
                 "Write it as this model name in " + std::string("$XDG_DATA_HOME/nextword/models") +
                     ", where --model NAME finds it")
        ->excludes(output);
    c.add_flag("--force", o.force, "Replace the output directory if it exists");
    c.add_option("--passes", o.passes, "Fine-tuning passes over the text")->capture_default_str();
    c.add_option("--steps", o.steps, "Fine-tuning steps instead of --passes");
    c.add_option("--minutes", o.minutes,
                 "Stop fine-tuning after this many minutes and write the model (0: no bound)")
        ->capture_default_str();
    c.add_option("--lr", o.lr, "Fine-tuning's peak learning rate")->capture_default_str();
    c.add_option("--threads", o.threads, "Worker threads (0: every core)")->capture_default_str();
    c.add_option("--seed", o.seed, "Seed of every random choice")->capture_default_str();
    c.add_option("-f,--format", format, "Summary on stdout: text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  }

  int run() {
    if (!name.empty()) {
      if (name.find('/') != std::string::npos || name == "." || name == "..") {
        throw usage_error("adapt: --name " + name + ": a model's name has no '/' (use -o DIR)");
      }
      const std::string home = user_models_directory();
      if (home.empty()) throw usage_error("adapt: --name: neither XDG_DATA_HOME nor HOME is set");
      o.out_dir = home + "/" + name;
    }
    if (o.out_dir.empty()) throw usage_error("adapt: give -o DIR or --name NAME");
    o.base_name = model.empty() ? default_model() : model;
    o.base = model_directory(model);

    Progress progress;
    AdaptHooks hooks;
    hooks.message = [&](const std::string& line) { progress.message(line); };
    hooks.progress = [&](const TrainProgress& p) {
      char text[200];
      std::snprintf(text, sizeof text, "adapt: step %d/%d  loss %.3f  %s left", p.step, p.steps,
                    p.loss, format_duration(p.eta_seconds).c_str());
      progress.update(static_cast<double>(p.step) / p.steps, text,
                      {{"step", p.step},
                       {"steps", p.steps},
                       {"loss", p.loss},
                       {"elapsed_s", std::round(p.elapsed_seconds * 10) / 10},
                       {"eta_s", std::round(p.eta_seconds)}});
    };
    hooks.should_stop = [] { return stop_signal() != 0; };
    catch_stop_signals();
    const AdaptSummary s = adapt(o, hooks);
    progress.finish();
    if (s.stopped) {
      progress.message("adapt: fine-tuning stopped after " + std::to_string(s.steps_done) + " of " +
                       std::to_string(s.steps) + " steps; the model has what they learned");
    }
    if (format == "json") {
      write_line(nlohmann::ordered_json{{"model", s.out_dir},
                                        {"base", o.base_name},
                                        {"words", s.words},
                                        {"documents", s.documents},
                                        {"held_out_words", s.held_out_words},
                                        {"steps", s.steps_done},
                                        {"planned_steps", s.steps},
                                        {"stopped", s.stopped},
                                        {"memory", s.memory},
                                        {"kept_base_weights", s.kept_base_weights},
                                        {"lexicon_words_added", s.lexicon_words_added},
                                        {"base_perplexity", s.base_perplexity},
                                        {"transformer_perplexity", s.transformer_perplexity},
                                        {"perplexity", s.perplexity},
                                        {"train_seconds", std::round(s.train_seconds * 10) / 10},
                                        {"seconds", std::round(s.seconds * 10) / 10}}
                     .dump());
    } else {
      char line[600];
      std::snprintf(line, sizeof line,
                    "%s: adapted from %s on %lld words in %s; held-out perplexity %.1f (%s: %.1f)",
                    s.out_dir.c_str(), o.base_name.c_str(), static_cast<long long>(s.words),
                    format_duration(s.seconds).c_str(), s.perplexity, o.base_name.c_str(),
                    s.base_perplexity);
      write_line(line);
    }
    return s.stopped && stop_signal() != 0 ? kInterrupted : 0;
  }
};

}  // namespace

CLI::App* add_adapt_command(CLI::App& app, std::function<int()>& run) {
  return add_command<AdaptCommand>(
      app, "adapt",
      "Adapt a model to a person's own text: fine-tuned, with the text's n-grams as its memory, "
      "written as a new model (-o DIR or --name NAME)",
      run);
}

}  // namespace nextword::cli
