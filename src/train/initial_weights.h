// A fresh run's tensors and first weights: GPT-2's random initialization,
// or (with train --init-from) a model's own, whose vocabulary the run then
// takes.
#pragma once

#include <string>

#include "model/model_file.h"
#include "train/trainer.h"

namespace nextword {

// The option that trains an optional tensor (TensorSpec::optional), by its
// name: classifier_bias, ffn_bias (the feed-forward block's) or attention_bias.
bool TrainOptions::*optional_tensor_option(const std::string& name);

// The tensors a run trains: every required one, plus the optional biases asked for.
std::vector<TensorSpec> trained_tensors(const TrainOptions& options, const Config& config);

// GPT-2's initialization, by each tensor's role (TensorRole): matrices
// N(0, init_std), the projections that feed the residual stream scaled by
// 1/sqrt(2 L) (or 0 with zero_init_projections), norm gains 1, biases 0. A
// pure function of the seed.
void initialize(Weights& w, const TrainOptions& o, const Config& c);

// --init-from's model (its F16 or BF16 widened as at load), without its
// memory. Throws Error(kUsage) when its unk and bos tokens are not the run's.
Model init_model(const TrainOptions& o);

// A run that continues `from`, found in `dir` (train --from, adapt): its
// shape, vocabulary size and tokens, the optional tensors it has, and
// init_from = dir.
void take_model_shape(TrainOptions& o, const Model& from, const std::string& dir);

// `to` gets `from`'s tensors: the same names and shapes, tensor for tensor,
// else Error(kUsage) naming the first that differs.
void copy_weights(Weights& to, const Model& from, const std::string& init_from);

}  // namespace nextword
