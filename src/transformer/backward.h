// The backward pass: d loss / d every parameter, for a training forward pass
// kept in Activations (transformer/transformer.h).
//
// It is the forward pass read from the bottom up, one *_backward
// (transformer/blocks.h) for each *_forward, as in llm.c's train_gpt2.c.
#pragma once

#include "model/model_file.h"
#include "transformer/blocks.h"
#include "transformer/state.h"

namespace nextword {

// Mean cross-entropy of logits [N, V] against targets [N]. Leaves d loss /
// d logits in `logits`.
double mean_loss_forward_backward(float* logits, const int* targets, int N, int V);

// The same on a training pass's logits (N = B*T), through the adaptive
// softmax's clusters when the model has them; marks them as gradients.
double loss_forward_backward(const Model& model, Activations& activations, const int* targets);

// The same with a teacher's next-word logits [N, V] of the same windows
// (models without an adaptive softmax):
// (1 - w) CE + w tau^2 KL(teacher || student) at temperature tau, averaged
// over the N positions (math/layers.h, distillation_forward_backward).
double distillation_loss_forward_backward(Activations& activations, const float* teacher,
                                          const int* targets, int vocab_size, float weight,
                                          float tau);

// Adds d loss / d parameter into `grads`, an arena laid out like
// model.weights.values(): a parameter's gradient is at the parameter's offset.
// Throws std::logic_error unless `activations` are a forward pass of this
// model whose logits loss_forward_backward has turned into gradients.
void backward(const Model& model, const Activations& activations, GradState& g, float* grads);

}  // namespace nextword
