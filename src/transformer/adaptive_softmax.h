// The adaptive softmax (Grave, Joulin, Cissé, Grangier and Jégou 2017,
// "Efficient softmax approximation for GPUs"), the classifier of a model
// with Config::adaptive_cutoffs (data/FORMAT.md, "Adaptive softmax").
//
// The head scores the frequent words [0, c_1) and one entry per cluster;
// cluster i scores its words [c_i, c_{i+1}) from a narrower projection of
// the context vector z:
//
//   head      = z [C_head ; clusters]^T + c              [head_size]
//   tail_i    = (z proj_i^T) words_i^T                    [V_i]
//   ln p(w)   = ln softmax(head)[w]                                  w < c_1
//             = ln softmax(head)[c_1 + i] + ln softmax(tail_i)[w - c_i]  w in cluster i
//
// Prediction computes every word's ln p (the "logits" every reader of a
// prediction takes a softmax of: the softmax of log-probabilities is the
// probabilities). Training computes the head for every position and a
// cluster only for the positions whose target is in it, which is what makes
// a large vocabulary cheap: the block pair below, as in llm.c.
#pragma once

#include <vector>

#include "model/model_file.h"
#include "transformer/blocks.h"
#include "transformer/state.h"

namespace nextword {

// head[R, head_size] = Z[R, d] [C_head ; clusters]^T + c: the head's logits.
void adaptive_head_forward(float* head, const float* Z, const Model& model, int R);

// log_probs[R, V] = ln p(w | z) of every word, for R context vectors Z[R, d]
// (after the final norm).
void adaptive_log_probs_forward(float* log_probs, const float* Z, const Model& model, int R);

// Cluster i's words of log_probs [R, V]: ln p(w | z) = ln softmax(tail_i)[w]
// + mass[r * ld_mass], the cluster's ln probability in the head's log
// softmax of row r. adaptive_log_probs_forward's, one cluster at a time
// (transformer/adaptive_row.h), the same bits.
void adaptive_cluster_forward(float* log_probs, const float* Z, const float* mass, int ld_mass,
                              const Model& model, int i, int R);

// Training, after forward() has left the head's logits in a.logits [N,
// head_size] and Z in a.Z: the clusters of the targets' words, the summed
// loss -sum ln p(target), and the logits of the head and of each cluster
// turned into d (loss * scale) / d logits.
double adaptive_loss_forward_backward(const Model& model, Activations& a, const int* targets,
                                      float scale);

// dZ[N, d] += d loss / d Z, and the gradients of the head, the clusters'
// rows, projections and words, from what adaptive_loss_forward_backward left.
void adaptive_softmax_backward(float* dZ, const Gradients& G, const Model& model,
                               const Activations& a, GradState& g);

// Word w's score as a linear function of z: score(w) = z . direction + bias,
// with ln p(w) = score(w) - the log-normalizers of the head (and of w's
// cluster). For a head word its classifier row and bias; for a cluster's,
// the cluster's head row plus proj^T words[w], and the cluster's bias.
// Direct logit attribution reads the word along it.
double adaptive_word_readout(const Model& model, int w, std::vector<float>& direction);

}  // namespace nextword
