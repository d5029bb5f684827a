// One step of training, as every rank takes it: the workers' forward and
// backward passes over their share of the batch, the ranks' one exchange of
// gradients, then the optimizer's update at the step's learning rate.
// trainer.h runs these steps; the unit tests and the reference comparisons
// take them one at a time.
#pragma once

#include <cstddef>
#include <vector>

#include "model/config.h"
#include "train/trainer.h"
#include "transformer/backward.h"
#include "transformer/transformer.h"

namespace nextword {

// What the ranks agree on at the end of a step's exchange.
struct StepTotals {
  double loss = 0;    // mean over every rank's windows
  bool stop = false;  // some rank was asked to stop
};

// One worker thread's share of a step: its windows' forward pass, kept for
// backward, its gradient buffers and the gradients of its windows' mean loss.
struct Worker {
  Activations activations;
  GradState grad_state;
  RunState teacher;          // the teacher's pass over the same windows (distillation)
  std::vector<float> grads;  // laid out like Weights::values()
};

// Everything training keeps from step to step besides the weights: the
// gradients and AdamW's moments (arenas laid out like Weights::values()), the
// workers' activations and gradient buffers, and validation's scratch.
struct TrainingState {
  // `workers` threads share each step's windows (at least 1).
  explicit TrainingState(const Weights& weights, int workers = 1);
  // The gradients of the `parameters` weights, then two more floats, the
  // step's loss and stop flag: the one buffer the ranks sum at every step.
  std::vector<float> grads;
  std::vector<float> m, v;
  size_t parameters = 0;
  std::vector<bool> decayed;        // per tensor: weight decay applies (matrices, see TensorRole)
  std::vector<float> muon_scratch;  // Newton-Schulz's products
  double grad_norm = 0;             // of the last update, before clipping
  std::vector<Worker> workers;      // [W]; worker 0's gradients are `grads`
  const Model* teacher = nullptr;   // distillation's teacher, or none
  RunState validation;              // validation's forward passes (no dropout, nothing kept)
  Activations adaptive_validation;  // the same for a model with an adaptive softmax

  // Forward (with dropout), loss and backward on this rank's windows
  // inputs/targets [B, T], split over the workers: grads becomes d (their
  // mean loss) / d weights. Worker w draws the dropout masks of share
  // first_share + w of step s (a rank's first share is rank * W). Returns
  // that mean loss.
  double gradients(Model& model, const TrainOptions& options, const int* inputs, const int* targets,
                   int B, int T, int s, int first_share);

  // The step's one collective (data_parallel::allreduce_sum): grads becomes
  // the mean of every rank's, which is the gradient of the whole batch's mean
  // loss, since every rank has as many windows; and the ranks learn the
  // batch's loss and whether any of them was asked to stop.
  StepTotals exchange(double loss, bool stop);

  // Clips the gradients to options.clip and applies AdamW with step s's
  // learning rate (s counted from 0). Returns the gradient norm before clipping.
  double update(Weights& weights, const TrainOptions& options, int s);
};

// Whether --optimizer muon updates this tensor with Muon: a layer's matrix
// (attention and feed-forward), never the embedding, the adaptive softmax,
// a gain or a bias.
bool uses_muon(const TensorSpec& spec);

// One training step (s from 0) of one rank, as `train` runs it: gradients on
// the windows inputs/targets [B, T], exchange, update. Returns the loss.
double train_step(Model& model, TrainingState& training, const TrainOptions& options, int s,
                  const int* inputs, const int* targets, int B, int T);

// The learning rate at step s (0-based): linear warmup, then the schedule's
// decay (TrainOptions::schedule).
double learning_rate(const TrainOptions& options, int step);

}  // namespace nextword
