// One training step: TrainingState (trainer.h), the workers' forward and
// backward passes, the exchange between ranks, the clipped AdamW update and
// the learning-rate schedule.
#include "train/training_step.h"

#include <algorithm>
#include <cmath>

#include "base/random.h"
#include "train/adamw.h"
#include "train/data_parallel.h"
#include "transformer/backward.h"
#include "transformer/transformer.h"

namespace nextword {

// The floats after the gradients in TrainingState::grads.
constexpr size_t kLossSlot = 0, kStopSlot = 1, kExchangedScalars = 2;

TrainingState::TrainingState(const Weights& weights, int worker_count) {
  const auto n = static_cast<size_t>(weights.parameter_count());
  parameters = n;
  grads.assign(n + kExchangedScalars, 0.0f);
  workers.resize(static_cast<size_t>(std::max(worker_count, 1)));
  for (size_t w = 1; w < workers.size(); ++w) workers[w].grads.assign(n, 0.0f);
  m.assign(n, 0.0f);
  v.assign(n, 0.0f);
  for (const TensorSpec& spec : weights.tensors()) {
    decayed.push_back(spec.role == TensorRole::kMatrix ||
                      spec.role == TensorRole::kResidualProjection);
  }
}

double TrainingState::gradients(Model& model, const TrainOptions& o, const int* inputs,
                                const int* targets, int B, int T, int s, int first_share) {
  // Worker w takes windows [B w / W, B (w+1) / W): as many as it can get
  // when W does not divide B, none when there are more workers than windows.
  const int W = std::min(static_cast<int>(workers.size()), B);
  std::vector<double> losses(static_cast<size_t>(W));
  std::fill(grads.begin(), grads.end(), 0.0f);
#pragma omp parallel for num_threads(W) schedule(static, 1) if (W > 1)
  for (int w = 0; w < W; ++w) {
    Worker& worker = workers[static_cast<size_t>(w)];
    float* out = w == 0 ? grads.data() : worker.grads.data();
    const int first = B * w / W, count = B * (w + 1) / W - first;
    const auto offset = static_cast<size_t>(first) * static_cast<size_t>(T);
    const uint64_t seed = random_bits(o.seed, RandomStream::kDropout, static_cast<uint64_t>(s),
                                      static_cast<uint64_t>(first_share + w));
    forward(model, worker.activations, inputs + offset, count, T, Dropout{o.dropout, seed});
    if (teacher != nullptr) {
      ForwardOptions every;
      every.all_positions = true;
      forward(*teacher, worker.teacher, inputs + offset, count, T, every);
      losses[static_cast<size_t>(w)] = distillation_loss_forward_backward(
          worker.activations, worker.teacher.logits.data(), targets + offset,
          model.config.vocab_size, o.teacher_weight, o.temperature);
    } else {
      losses[static_cast<size_t>(w)] =
          loss_forward_backward(model, worker.activations, targets + offset);
    }
    if (w > 0) std::fill(worker.grads.begin(), worker.grads.end(), 0.0f);
    backward(model, worker.activations, worker.grad_state, out);
  }
  // The mean over all B windows: each worker's mean weighted by its share of
  // them, added in worker order (so the same bits at a given W).
  double loss = losses[0];
  if (W > 1) {
    loss = 0;
    for (int w = 0; w < W; ++w) {
      const int count = B * (w + 1) / W - B * w / W;
      loss += losses[static_cast<size_t>(w)] * count / B;
      const float share = static_cast<float>(count) / static_cast<float>(B);
      const float* g = w == 0 ? grads.data() : workers[static_cast<size_t>(w)].grads.data();
      if (w == 0) {
        for (size_t i = 0; i < parameters; ++i) grads[i] = g[i] * share;
      } else {
        for (size_t i = 0; i < parameters; ++i) grads[i] += g[i] * share;
      }
    }
  }
  return loss;
}

StepTotals TrainingState::exchange(double loss, bool stop) {
  const int ranks = data_parallel::ranks();
  if (ranks == 1) return {loss, stop};  // nothing to exchange: no rounding of the loss either
  float* scalars = grads.data() + parameters;
  scalars[kLossSlot] = static_cast<float>(loss);
  scalars[kStopSlot] = stop ? 1.0f : 0.0f;
  data_parallel::allreduce_sum(grads.data(), grads.size());
  // Each rank's gradient is of the mean over its B/R windows: their mean is
  // the gradient of the mean over all B.
  const float mean = 1.0f / static_cast<float>(ranks);
  for (size_t i = 0; i < parameters; ++i) grads[i] *= mean;
  return {scalars[kLossSlot] / ranks, scalars[kStopSlot] > 0};
}

bool uses_muon(const TensorSpec& spec) {
  return spec.shape.size() == 2 && spec.name.rfind("layers.", 0) == 0 &&
         (spec.role == TensorRole::kMatrix || spec.role == TensorRole::kResidualProjection);
}

double TrainingState::update(Weights& w, const TrainOptions& o, int s) {
  grad_norm = gradient_norm(grads.data(), parameters);
  if (o.clip > 0 && grad_norm > o.clip) {
    const auto scale = static_cast<float>(o.clip / grad_norm);
    std::for_each_n(grads.begin(), parameters, [scale](float& g) { g *= scale; });
  }
  const auto lr = static_cast<float>(learning_rate(o, s));
  size_t offset = 0;
  for (size_t t = 0; t < w.tensors().size(); ++t) {
    const TensorSpec& spec = w.tensors()[t];
    const auto size = static_cast<size_t>(spec.size());
    const float decay = decayed[t] ? o.weight_decay : 0.0f;
    if (o.optimizer == "muon" && uses_muon(spec)) {
      // Muon's momentum lives in AdamW's m; the schedule scales both rates alike,
      // and the decay is AdamW's, lr x weight_decay a step.
      muon_update(w.values() + offset, grads.data() + offset, m.data() + offset,
                  static_cast<int>(spec.shape[0]), static_cast<int>(spec.shape[1]),
                  o.muon.lr * lr / o.lr, lr * decay, o.muon, muon_scratch);
    } else {
      adamw_update(w.values() + offset, grads.data() + offset, m.data() + offset, v.data() + offset,
                   size, lr, decay, o.adamw, s + 1);
    }
    offset += size;
  }
  return grad_norm;
}

double train_step(Model& model, TrainingState& training, const TrainOptions& o, int s,
                  const int* inputs, const int* targets, int B, int T) {
  const double loss =
      training.gradients(model, o, inputs, targets, B, T, s,
                         data_parallel::rank() * static_cast<int>(training.workers.size()));
  const StepTotals totals = training.exchange(loss, false);
  training.update(model.weights, o, s);
  return totals.loss;
}

double learning_rate(const TrainOptions& o, int step) {
  if (step < o.warmup) return o.lr * (step + 1) / o.warmup;
  if (o.schedule == "wsd") {
    // The decay's steps: the last decay_fraction of all, after the warmup.
    const int decay =
        std::min(o.steps - o.warmup, static_cast<int>(std::lround(o.decay_fraction * o.steps)));
    const int start = o.steps - decay;
    if (step < start) return o.lr;
    const double progress =
        std::min(1.0, static_cast<double>(step - start + 1) / std::max(decay, 1));
    return o.lr + (o.min_lr - o.lr) * progress;
  }
  const int decay_steps = std::max(o.steps - o.warmup, 1);
  const double progress = std::min(1.0, static_cast<double>(step - o.warmup) / decay_steps);
  return o.min_lr + 0.5 * (o.lr - o.min_lr) * (1.0 + std::cos(M_PI * progress));
}

}  // namespace nextword
