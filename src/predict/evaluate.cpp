#include "predict/evaluate.h"

#include <algorithm>
#include <cmath>

#include "math/layers.h"
#include "predict/ranking.h"
#include "text/documents.h"
#include "transformer/transformer.h"

namespace nextword {

double EvalResult::perplexity() const { return std::exp(cross_entropy); }
double EvalResult::unknown_rate() const {
  return tokens > 0 ? static_cast<double>(unknown) / static_cast<double>(tokens) : 0;
}
double EvalResult::top1_accuracy() const {
  return tokens > 0 ? static_cast<double>(top1) / static_cast<double>(tokens) : 0;
}
double EvalResult::top5_accuracy() const {
  return tokens > 0 ? static_cast<double>(top5) / static_cast<double>(tokens) : 0;
}

namespace {

constexpr int kBatch = 32;

struct Scorer {
  const Model& model;
  EvalResult& result;
  double ce_sum = 0;

  // Scores one row of logits against its target (the row becomes probabilities).
  void score(float* logits, int target) {
    const int V = model.config.vocab_size;
    // The target's rank among the words predict can show.
    const float mine = logits[target];
    const int better = rank_of(model, logits, target, 5);
    const bool unknown = target == model.unk_id;
    result.unknown += unknown;
    result.top1 += !unknown && better == 0;
    result.top5 += !unknown && better < 5;
    // -ln softmax(logits)[target] = logsumexp(logits) - logit[target]
    ce_sum += softmax_forward(logits, V) - static_cast<double>(mine);
    ++result.tokens;
  }
};

}  // namespace

EvalResult evaluate(const Model& model, const std::vector<Document>& documents,
                    const std::function<void(int64_t, int64_t)>& progress) {
  const Config& c = model.config;
  const int V = c.vocab_size, L = c.max_len;
  EvalResult result;
  Scorer scorer{model, result};
  RunState state;

  // The text as the model was trained on it: every document after a bos,
  // back to back. Contexts slide over this stream, across document ends, as
  // the training windows do; every word is scored, bos tokens are not.
  std::vector<int> stream;
  for (const Document& document : documents) {
    if (document.empty()) continue;
    ++result.documents;
    if (model.bos_id >= 0) stream.push_back(model.bos_id);
    for (int id : to_ids(document, model.vocab, model.unk_id, model.bos_id)) stream.push_back(id);
  }
  const int n = static_cast<int>(stream.size());
  int64_t total = 0;
  for (int t = 1; t < n; ++t) total += stream[static_cast<size_t>(t)] != model.bos_id;

  std::vector<int> windows, targets;
  auto flush = [&] {
    const int B = static_cast<int>(targets.size());
    if (B == 0) return;
    forward(model, state, windows.data(), B, L);
    for (int b = 0; b < B; ++b) {
      scorer.score(state.logits.data() + static_cast<size_t>(b) * V,
                   targets[static_cast<size_t>(b)]);
    }
    windows.clear();
    targets.clear();
    if (progress) progress(result.tokens, total);
  };

  // Positions 1 .. min(n-1, L): their contexts all start at the stream's
  // start, so one causal pass over the first tokens scores them all.
  const int T = std::min(n - 1, L);
  if (T > 0) {
    ForwardOptions all;
    all.all_positions = true;
    forward(model, state, stream.data(), 1, T, all);
    for (int t = 0; t < T; ++t) {
      const int target = stream[static_cast<size_t>(t) + 1];
      if (target != model.bos_id)
        scorer.score(state.logits.data() + static_cast<size_t>(t) * V, target);
    }
  }
  // Positions L+1 .. n-1: the last L tokens before each, in batches.
  for (int t = L + 1; t < n; ++t) {
    const int target = stream[static_cast<size_t>(t)];
    if (target == model.bos_id) continue;
    windows.insert(windows.end(), stream.begin() + (t - L), stream.begin() + t);
    targets.push_back(target);
    if (static_cast<int>(targets.size()) == kBatch) flush();
  }
  flush();
  result.cross_entropy = result.tokens > 0 ? scorer.ce_sum / static_cast<double>(result.tokens) : 0;
  if (progress) progress(result.tokens, total);
  return result;
}

}  // namespace nextword
