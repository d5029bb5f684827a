#include "predict/generate.h"

#include <algorithm>
#include <cmath>

#include "base/random.h"
#include "predict/memory_mixture.h"
#include "predict/ranking.h"

namespace nextword {

int choose_next(const Model& model, const float* logits, const GenerateOptions& o, double uniform) {
  FullRow row(model, {logits, static_cast<size_t>(model.config.vocab_size)});
  return choose_next(model, row, o, uniform);
}

int choose_next(const Model& model, LogitRow& row, const GenerateOptions& o, double uniform) {
  // The words sampling may reach, best first: the best one alone when greedy,
  // the top_k (0: every word) otherwise; only those are sorted.
  thread_local std::vector<int> ids;
  const int k = o.temperature <= 0.0f ? 1 : o.top_k > 0 ? o.top_k : model.config.vocab_size;
  row.top(k, ids);
  if (o.temperature <= 0.0f) return ids[0];
  // p_i = softmax(logit_i / T) over the candidates left.
  std::vector<double> p(ids.size());
  const double top = row.logit(ids[0]) / static_cast<double>(o.temperature);
  double sum = 0.0;
  for (size_t i = 0; i < ids.size(); ++i) {
    p[i] = std::exp(row.logit(ids[i]) / static_cast<double>(o.temperature) - top);
    sum += p[i];
  }
  // The nucleus: the fewest best words whose probability reaches top_p.
  size_t keep = ids.size();
  if (o.top_p < 1.0f) {
    double mass = 0.0;
    for (size_t i = 0; i < ids.size(); ++i) {
      mass += p[i] / sum;
      if (mass >= o.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  double kept = 0.0;
  for (size_t i = 0; i < keep; ++i) kept += p[i];
  double target = uniform * kept;
  for (size_t i = 0; i < keep; ++i) {
    target -= p[i];
    if (target < 0.0) return ids[i];
  }
  return ids[keep - 1];
}

namespace {

// The choice of one step under the guard's verdict. Greedy, the unguarded
// best word stands when the verdict leaves it alone (the verdict only
// lowers logits); otherwise, and always when sampling under a verdict, the
// choice reads the whole row (mixed with the memory as the choice reads it)
// with the verdict applied. Should the verdict ban every word, the
// unguarded choice stands.
int guarded_choice(Predictor& predictor, const Encoded& window, LogitRow& row,
                   const GenerateOptions& o, const Repetition& repetition, bool mixed_greedy,
                   double uniform) {
  const Model& model = predictor.model();
  const int plain = mixed_greedy
                        ? mixed_argmax(model, window.ids, row, predictor.logits_normalized())
                        : choose_next(model, row, o, uniform);
  if (o.temperature <= 0.0f ? !repetition.touches(plain) : repetition.empty()) {
    return plain;
  }
  thread_local std::vector<float> guarded;
  const std::span<const float> all = row.all();
  guarded.assign(all.begin(), all.end());
  if (mixed_greedy) mix_memory(model, window.ids, guarded);
  repetition.apply(guarded);
  FullRow full(model, guarded);
  const int id = choose_next(model, full, o, uniform);
  return std::isinf(guarded[static_cast<size_t>(id)]) ? plain : id;
}

}  // namespace

// Each word extends the context by one token, which Predictor::next_logits
// runs alone through its key/value cache (transformer/cache.h), with the
// same bits as a pass over the whole window. Up to max_len tokens greedy
// generation is so the top-1 of `predict`, word for word. Past max_len the
// window is encode_growing's (growing_window): it moves once a sentence, and
// the cache serves every word in between.
std::vector<int> generate(Predictor& predictor, Encoded input, const GenerateOptions& o,
                          const std::function<bool(int id)>& on_word) {
  const Model& model = predictor.model();
  // Greedy with a memory: the transformer's logits, and the mixture's best
  // word from them (memory_mixture.h), not the whole mixed row.
  const bool mixed_greedy =
      o.temperature <= 0.0f && !model.subword && model.memory != nullptr && predictor.mixing();
  const MixingOff unmixed(predictor, mixed_greedy);
  Repetition repetition = Repetition::of(o.guard, model);
  std::vector<int> words;
  for (int step = 0; step < o.max_words; ++step) {
    const Encoded window = growing_window(model, input);
    // An adaptive softmax's clusters are computed as the choice needs them.
    LogitRow& row = predictor.next_row(window);
    // A uniform number in [0, 1) from the seed and the step alone.
    const double uniform =
        uniform01(splitmix64(o.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(step)));
    // A subword model's text ends where its most likely next piece is the
    // BOS, as in llama2.c's run.c, or the EOS, as in llama.cpp
    // (predict/ranking.h never offers either).
    if (model.subword && o.temperature <= 0.0f) {
      const std::span<const float> all = row.all();
      const auto best = static_cast<int>(std::max_element(all.begin(), all.end()) - all.begin());
      if (best == model.subword->bos() || best == model.subword->eos()) break;
    }
    repetition.look(input.ids);
    const int id = guarded_choice(predictor, window, row, o, repetition, mixed_greedy, uniform);
    words.push_back(id);
    input.ids.push_back(id);
    input.tokens.emplace_back(model.vocab.word(id));
    if (on_word && !on_word(id)) break;
  }
  return words;
}

}  // namespace nextword
