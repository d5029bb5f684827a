#include "eval/memory_fit.h"

#include <cmath>
#include <span>

#include "base/error.h"
#include "eval/wikitext_eval.h"
#include "predict/memory_mixture.h"

namespace nextword {

MemoryFit fit_memory_weights(Model& model, std::shared_ptr<const Memory> memory,
                             const Wikitext& text, const Lexicon* lexicon) {
  if (text.scored() == 0) throw input_error("no token to score");
  model.memory = std::move(memory);
  std::vector<MixturePoint> points;
  double spelling = 0;  // the summed ln q of words outside the vocabulary
  const std::vector<double> before = model.memory->header().lambdas;
  WikitextEvalHooks hooks;
  hooks.each = [&](const WikitextTokenScore& s) {
    const MixturePoint p{s.transformer_log_prob, s.memory_log_prob, s.memory_bucket};
    if (p.bucket < 0) {  // a first word with no context: neither model read it
      spelling += s.log_prob;
      return;
    }
    points.push_back(p);
    spelling += s.log_prob - mixture_log_likelihood({&p, 1}, before);
  };
  const WikitextEvalResult r =
      evaluate_wikitext(model, text, lexicon, WikitextEvalOptions{}, hooks);
  model.memory.reset();
  MemoryFit fit;
  const int buckets = static_cast<int>(before.size());
  fit.lambdas = fit_lambdas(points, buckets);
  fit.tokens = static_cast<int64_t>(points.size());
  const double N = static_cast<double>(r.scored), P = static_cast<double>(points.size());
  const std::vector<double> none(static_cast<size_t>(buckets), 0.0),
      alone(static_cast<size_t>(buckets), 1.0);
  auto nats = [&](std::span<const double> weights) {
    return -mixture_log_likelihood(points, weights) * P;
  };
  auto perplexity = [&](std::span<const double> weights) {
    return std::exp((nats(weights) - spelling) / N);
  };
  fit.mixed_nats = nats(fit.lambdas);
  fit.transformer_nats = nats(none);
  fit.memory_nats = nats(alone);
  fit.perplexity = perplexity(fit.lambdas);
  fit.transformer_perplexity = perplexity(none);
  fit.memory_perplexity = perplexity(alone);
  return fit;
}

}  // namespace nextword
