// A fresh run's first weights: GPT-2's random initialization, or (with
// train --init-from) a model's own, whose vocabulary the run then takes.
#pragma once

#include <string>

#include "model/model_file.h"
#include "train/trainer.h"

namespace nextword {

// GPT-2's initialization, by each tensor's role (TensorRole): matrices
// N(0, init_std), the projections that feed the residual stream scaled by
// 1/sqrt(2 L) (or 0 with zero_init_projections), norm gains 1, biases 0. A
// pure function of the seed.
void initialize(Weights& w, const TrainOptions& o, const Config& c);

// --init-from's model (its F16 or BF16 widened as at load), without its
// memory. Throws Error(kUsage) when its unk and bos tokens are not the run's.
Model init_model(const TrainOptions& o);

// `to` gets `from`'s tensors: the same names and shapes, tensor for tensor,
// else Error(kUsage) naming the first that differs.
void copy_weights(Weights& to, const Model& from, const std::string& init_from);

}  // namespace nextword
