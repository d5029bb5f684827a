// nextword eval: how well a model predicts the words of a text.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/threading.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/progress.h"
#include "eval/evaluate.h"
#include "eval/keystrokes.h"
#include "eval/wikitext.h"
#include "eval/wikitext_eval.h"
#include "text/documents.h"

namespace nextword::cli {
namespace {

struct EvalCommand {
  ModelOptions model;
  std::vector<std::string> files;
  std::string format = "text";
  bool ksr = false;
  CompletionOptions completion;
  std::string wikitext;
  WikitextEvalOptions wikitext_options;
  StrideOption stride;

  void add_to(CLI::App& c) {
    model.add_to(c);
    CLI::Option* text = c.add_option("text", files, "Text files to score (documents as for train)");
    CLI::Option* keystrokes =
        c.add_flag("--ksr", ksr,
                   "Keystroke savings instead: type the text with `complete`'s suggestions (-k, "
                   "--no-repeat, --learn, --history, --lexicon as for complete)");
    completion.add_to(c);
    CLI::Option* file =
        c.add_option("--wikitext", wikitext,
                     "Instead, the WikiText-103 measure on FILE, a WikiText tokenized file: "
                     "perplexity per WikiText token, words outside the vocabulary spelled by "
                     "the lexicon (--lexicon as for complete; README, eval --wikitext)")
            ->type_name("FILE")
            ->excludes(text)
            ->excludes(keystrokes);
    stride.add_to(c)->excludes(keystrokes)->excludes(file);
    WikitextEvalOptions& o = wikitext_options;
    CLI::Option* cache =
        c.add_flag("--cache", o.cache,
                   "With --wikitext: mix in the continuous cache (Grave et al. 2017) of the "
                   "article read so far")
            ->needs(file);
    c.add_option("--cache-size", o.cache_size, "Positions the cache keeps")
        ->needs(cache)
        ->check(CLI::Range(1, 1 << 24))
        ->capture_default_str();
    c.add_option("--cache-weight", o.cache_weight,
                 "lambda_c: p = (1 - lambda_c) p_model + lambda_c p_cache, at least 0, below 1 "
                 "(a default to be tuned)")
        ->needs(cache)
        ->capture_default_str();
    c.add_option("--cache-sharpness", o.cache_sharpness,
                 "theta: a cached position weighs e^(theta cos(h, h_i)) (a default to be tuned)")
        ->needs(cache)
        ->capture_default_str();
    c.add_option("-f,--format", format, "Output: text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  }

  int run() const {
    // Keystroke savings runs one context per forward pass: too small a
    // product to split over threads.
    set_threading(Threading::kRows, ksr ? 1 : available_cores());
    if (files.empty() && wikitext.empty()) {
      throw Error(ExitCode::kUsage, "eval: give TEXT files to score, or --wikitext FILE");
    }
    const WikitextEvalOptions& o = wikitext_options;
    if (!(o.cache_weight >= 0 && o.cache_weight < 1)) {
      throw Error(ExitCode::kUsage, "eval: --cache-weight must be at least 0 and below 1");
    }
    if (!(o.cache_sharpness >= 0) || std::isinf(o.cache_sharpness)) {
      throw Error(ExitCode::kUsage, "eval: --cache-sharpness must be a number, at least 0");
    }
    const Model m = model.load();
    if (ksr) return keystroke_savings(m);
    if (!wikitext.empty()) return wikitext_measure(m);
    const std::vector<Document> documents = read_documents(files, m.config.tokenizer);
    Progress progress;
    const EvalResult r = evaluate(m, documents, bar(progress), stride.of(m));
    progress.finish();
    if (format == "json") {
      nlohmann::ordered_json j = {
          {"documents", r.documents},         {"tokens", r.tokens},
          {"unknown_rate", r.unknown_rate()}, {"cross_entropy", r.cross_entropy},
          {"perplexity", r.perplexity()},     {"top1", r.top1_accuracy()},
          {"top5", r.top5_accuracy()},        {"stride", stride.of(m)}};
      write_line(j.dump());
      return 0;
    }
    char text[400];
    std::snprintf(text, sizeof text,
                  "documents      %lld\ntokens         %lld\nunknown        %.2f%%\n"
                  "cross-entropy  %.4f nats\nperplexity     %.2f\ntop-1          %.4f\n"
                  "top-5          %.4f\nstride         %d",
                  static_cast<long long>(r.documents), static_cast<long long>(r.tokens),
                  100 * r.unknown_rate(), r.cross_entropy, r.perplexity(), r.top1_accuracy(),
                  r.top5_accuracy(), stride.of(m));
    write_line(text);
    return 0;
  }

  // A bar on a terminal only: logs get the result, not the journey.
  static std::function<void(int64_t, int64_t)> bar(Progress& progress) {
    return [&progress, last_shown = int64_t{-1}](int64_t done, int64_t total) mutable {
      if (!progress.live() || total < 2000 || done - last_shown < total / 200) return;
      last_shown = done;
      char text[80];
      std::snprintf(text, sizeof text, "%lld/%lld positions", static_cast<long long>(done),
                    static_cast<long long>(total));
      progress.update(static_cast<double>(done) / static_cast<double>(total), text, {});
    };
  }

  // eval --wikitext: the WikiText-103 measure (eval/wikitext_eval.h).
  int wikitext_measure(const Model& m) const {
    // The measure feeds WikiText's words as the model's tokens (an unknown
    // word as the model's <unk>): a model of pieces has neither.
    if (m.subword) {
      throw usage_error("eval --wikitext: " + m.paths.weights +
                        ": a model of word pieces; the measure is for word models (eval FILE "
                        "scores any model by its pieces)");
    }
    const Wikitext text =
        read_wikitext(read_text_file(wikitext), m.config.tokenizer, m.config.unk_token);
    if (text.scored() == 0) throw input_error(wikitext + ": no WikiText token to score");
    const std::optional<Lexicon> lexicon = completion.load_lexicon(m.paths);
    Progress progress;
    WikitextEvalHooks hooks;
    hooks.progress = bar(progress);
    const WikitextEvalOptions& o = wikitext_options;
    const WikitextEvalResult r =
        evaluate_wikitext(m, text, lexicon ? &*lexicon : nullptr, o, hooks);
    progress.finish();
    if (!r.lexicon && r.oov > 0) {
      report(std::string("note: ") +
             (lexicon ? "no word of the lexicon is outside the vocabulary"
                      : "no lexicon.tsv beside the model's vocab.json") +
             ": q of a word outside the vocabulary was that of an untrained spelling model "
             "(uniform bytes)");
    }
    const double N = static_cast<double>(r.scored), tokens = static_cast<double>(r.model_tokens);
    const nlohmann::ordered_json cache =
        o.cache
            ? nlohmann::ordered_json{{"size", o.cache_size},
                                     {"weight", o.cache_weight},
                                     {"sharpness", o.cache_sharpness},
                                     {"without",
                                      {{"total_nats", r.model_only_nats},
                                       {"cross_entropy", r.model_only_nats / N},
                                       {"perplexity", r.model_only_perplexity()},
                                       {"top1", static_cast<double>(r.model_only_top1) / tokens},
                                       {"top5", static_cast<double>(r.model_only_top5) / tokens}}}}
            : nlohmann::ordered_json();
    if (format == "json") {
      nlohmann::ordered_json j = {{"documents", r.documents},
                                  {"wikitext_tokens", r.wikitext_tokens},
                                  {"unknown", r.unknown},
                                  {"heading_marks", r.heading_marks},
                                  {"scored", r.scored},
                                  {"model_tokens", r.model_tokens},
                                  {"oov_tokens", r.oov},
                                  {"oov_rate", r.oov_rate()},
                                  {"total_nats", r.total_nats},
                                  {"cross_entropy", r.cross_entropy()},
                                  {"perplexity", r.perplexity()},
                                  {"top1", r.top1_accuracy()},
                                  {"top5", r.top5_accuracy()},
                                  {"lexicon", r.lexicon},
                                  {"lexicon_words", r.lexicon_words},
                                  {"cache", cache},
                                  {"bands", bands_json(r)}};
      write_line(j.dump());
      return 0;
    }
    char line[900];
    std::snprintf(line, sizeof line,
                  "documents        %lld\n"
                  "WikiText tokens  %lld (%lld <unk> and %lld heading marks not scored)\n"
                  "scored (N)       %lld\n"
                  "model tokens     %lld scored, %.2f%% outside the vocabulary\n"
                  "total            %.1f nats\n"
                  "cross-entropy    %.4f nats per WikiText token\n"
                  "perplexity       %.2f\n"
                  "top-1            %.4f\n"
                  "top-5            %.4f\n"
                  "q                %s",
                  static_cast<long long>(r.documents), static_cast<long long>(r.wikitext_tokens),
                  static_cast<long long>(r.unknown), static_cast<long long>(r.heading_marks),
                  static_cast<long long>(r.scored), static_cast<long long>(r.model_tokens),
                  100 * r.oov_rate(), r.total_nats, r.cross_entropy(), r.perplexity(),
                  r.top1_accuracy(), r.top5_accuracy(),
                  r.lexicon ? ("the lexicon's " + std::to_string(r.lexicon_words) +
                               " words outside the vocabulary, and their spelling")
                                  .c_str()
                            : "uniform bytes (no lexicon)");
    std::string out = line;
    out += bands_text(r);
    if (o.cache) {
      char more[300];
      std::snprintf(more, sizeof more,
                    "\ncache            %d positions, weight %g, sharpness %g"
                    "\nwithout cache    perplexity %.2f, top-1 %.4f, top-5 %.4f",
                    o.cache_size, o.cache_weight, o.cache_sharpness, r.model_only_perplexity(),
                    static_cast<double>(r.model_only_top1) / static_cast<double>(r.model_tokens),
                    static_cast<double>(r.model_only_top5) / static_cast<double>(r.model_tokens));
      out += more;
    }
    write_line(out);
    return 0;
  }

  // Where the loss goes, one band a row: docs/models.md, "eval --wikitext".
  static nlohmann::ordered_json bands_json(const WikitextEvalResult& r) {
    nlohmann::ordered_json bands = nlohmann::ordered_json::array();
    for (const LossBand& b : r.bands) {
      nlohmann::ordered_json j = {{"band", b.name}};
      if (b.name != "outside") j["ids"] = {b.first_id, b.end_id};
      j["tokens"] = b.tokens;
      j["total_nats"] = b.nats;
      j["nats_per_token"] = b.tokens > 0 ? b.nats / static_cast<double>(b.tokens) : 0;
      j["loss_share"] = r.total_nats > 0 ? b.nats / r.total_nats : 0;
      if (b.name == "outside") {
        j["unk_nats"] = b.unk_nats;
        j["spelling_nats"] = b.nats - b.unk_nats;
      }
      bands.push_back(std::move(j));
    }
    return bands;
  }

  static std::string bands_text(const WikitextEvalResult& r) {
    std::string out =
        "\nwhere the loss goes (band, ids, tokens, nats per token, share of the loss)";
    for (const LossBand& b : r.bands) {
      const double tokens = static_cast<double>(b.tokens);
      char row[300];
      const std::string ids = b.name == "outside"
                                  ? "-"
                                  : std::to_string(b.first_id) + "-" + std::to_string(b.end_id - 1);
      std::snprintf(row, sizeof row, "\n  %-10s %-12s %8lld %7.3f %6.1f%%", b.name.c_str(),
                    ids.c_str(), static_cast<long long>(b.tokens),
                    b.tokens > 0 ? b.nats / tokens : 0.0,
                    r.total_nats > 0 ? 100 * b.nats / r.total_nats : 0.0);
      out += row;
      if (b.name == "outside" && b.tokens > 0) {
        std::snprintf(row, sizeof row, " (p(unk) %.3f + spelling %.3f)", b.unk_nats / tokens,
                      (b.nats - b.unk_nats) / tokens);
        out += row;
      }
    }
    return out;
  }

  int keystroke_savings(const Model& m) const {
    std::string text;
    for (const std::string& file : files) text += read_text_file(file) + "\n";
    const std::optional<LexiconIndex> lexicon = completion.load_lexicon_index(m);
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
      "Score a model on text: cross-entropy, perplexity, top-1 and top-5 accuracy; keystroke "
      "savings (--ksr); or the WikiText-103 measure (--wikitext)",
      run);
}

}  // namespace nextword::cli
