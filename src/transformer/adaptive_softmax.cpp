#include "transformer/adaptive_softmax.h"

#include <algorithm>
#include <vector>

#include "math/layers.h"

namespace nextword {
namespace {

void fit(std::vector<float>& buffer, size_t n) { buffer.resize(n); }

// hidden[R, d_i] = Z[R, d] proj_i^T: the projection in front of cluster i.
void project(float* hidden, const float* Z, const Model& model, int i, int R) {
  const Config& c = model.config;
  classifier_forward(hidden, Z, model.weights.cluster[static_cast<size_t>(i)].proj, nullptr, R,
                     c.d_model, c.cluster_width(i));
}

// The cluster that holds word w (w >= head_words).
int cluster_of(const Config& c, int w) {
  const auto& cutoffs = c.adaptive_cutoffs;
  return static_cast<int>(std::upper_bound(cutoffs.begin(), cutoffs.end(), w) - cutoffs.begin()) -
         1;
}

}  // namespace

void adaptive_head_forward(float* head, const float* Z, const Model& model, int R) {
  const Config& c = model.config;
  const Weights& w = model.weights;
  const int d = c.d_model, words = c.head_words(), H = c.head_size();
  classifier_forward(head, Z, w.classifier, nullptr, R, d, words, H);
  classifier_forward(head + words, Z, w.clusters, nullptr, R, d, c.clusters(), H);
  if (w.classifier_bias == nullptr) return;
  for (int r = 0; r < R; ++r) accumulate(head + area(r, H), w.classifier_bias, area(1, H));
}

void adaptive_log_probs_forward(float* log_probs, const float* Z, const Model& model, int R) {
  const Config& c = model.config;
  const int V = c.vocab_size, H = c.head_size(), words = c.head_words();
  thread_local std::vector<float> head;
  fit(head, area(R, H));
  adaptive_head_forward(head.data(), Z, model, R);
  for (int r = 0; r < R; ++r) {
    float* row = head.data() + area(r, H);
    log_softmax_forward(row, H);
    std::copy(row, row + words, log_probs + area(r, V));
  }
  for (int i = 0; i < c.clusters(); ++i) {
    adaptive_cluster_forward(log_probs, Z, head.data() + words + i, H, model, i, R);
  }
}

void adaptive_cluster_forward(float* log_probs, const float* Z, const float* mass, int ld_mass,
                              const Model& model, int i, int R) {
  const Config& c = model.config;
  const int V = c.vocab_size;
  const int start = c.cluster_start(i), size = c.cluster_words(i), width = c.cluster_width(i);
  thread_local std::vector<float> hidden;
  fit(hidden, area(R, width));
  project(hidden.data(), Z, model, i, R);
  classifier_forward(log_probs + start, hidden.data(),
                     model.weights.cluster[static_cast<size_t>(i)].words, nullptr, R, width, size,
                     V);
  for (int r = 0; r < R; ++r) {
    float* row = log_probs + area(r, V) + start;
    log_softmax_forward(row, size);
    const float cluster = mass[area(r, ld_mass)];
    for (int j = 0; j < size; ++j) row[j] += cluster;
  }
}

double adaptive_loss_forward_backward(const Model& model, Activations& a, const int* targets,
                                      float scale) {
  const Config& c = model.config;
  const int N = a.sequences.N(), d = c.d_model, words = c.head_words(), n = c.clusters();
  a.clusters.resize(static_cast<size_t>(n));
  for (ClusterActivations& cluster : a.clusters) cluster.rows.clear();
  // The head's target: the word itself, or its cluster's entry.
  std::vector<int> head_targets(static_cast<size_t>(N));
  for (int t = 0; t < N; ++t) {
    const int target = targets[t];
    if (target < words) {
      head_targets[static_cast<size_t>(t)] = target;
    } else {
      const int i = cluster_of(c, target);
      head_targets[static_cast<size_t>(t)] = words + i;
      a.clusters[static_cast<size_t>(i)].rows.push_back(t);
    }
  }
  double loss =
      crossentropy_forward_backward(a.logits.data(), head_targets.data(), N, c.head_size(), scale);
  for (int i = 0; i < n; ++i) {
    ClusterActivations& cluster = a.clusters[static_cast<size_t>(i)];
    const int rows = static_cast<int>(cluster.rows.size());
    if (rows == 0) continue;
    const int width = c.cluster_width(i), size = c.cluster_words(i), start = c.cluster_start(i);
    fit(cluster.Z, area(rows, d));
    fit(cluster.hidden, area(rows, width));
    fit(cluster.logits, area(rows, size));
    std::vector<int> tail_targets(static_cast<size_t>(rows));
    for (int r = 0; r < rows; ++r) {
      const int t = cluster.rows[static_cast<size_t>(r)];
      std::copy_n(a.Z.data() + area(t, d), d, cluster.Z.data() + area(r, d));
      tail_targets[static_cast<size_t>(r)] = targets[t] - start;
    }
    project(cluster.hidden.data(), cluster.Z.data(), model, i, rows);
    classifier_forward(cluster.logits.data(), cluster.hidden.data(),
                       model.weights.cluster[static_cast<size_t>(i)].words, nullptr, rows, width,
                       size);
    loss += crossentropy_forward_backward(cluster.logits.data(), tail_targets.data(), rows, size,
                                          scale);
  }
  return loss;
}

void adaptive_softmax_backward(float* dZ, const Gradients& G, const Model& model,
                               const Activations& a, GradState& g) {
  const Config& c = model.config;
  const Weights& w = model.weights;
  const int N = a.sequences.N(), d = c.d_model, words = c.head_words(), H = c.head_size();
  // head = Z [C_head ; clusters]^T + c
  classifier_backward(dZ, G.of(w.classifier), nullptr, a.logits.data(), a.Z.data(), w.classifier, N,
                      d, words, H);
  classifier_backward(dZ, G.of(w.clusters), nullptr, a.logits.data() + words, a.Z.data(),
                      w.clusters, N, d, c.clusters(), H);
  if (float* dc = G.of(w.classifier_bias)) {
    for (int t = 0; t < N; ++t) accumulate(dc, a.logits.data() + area(t, H), area(1, H));
  }
  // tail_i = (Z_i proj^T) words^T, Z_i the rows of Z whose target is in cluster i
  for (int i = 0; i < c.clusters(); ++i) {
    const ClusterActivations& cluster = a.clusters[static_cast<size_t>(i)];
    const int rows = static_cast<int>(cluster.rows.size());
    if (rows == 0) continue;
    const ClusterWeights& cw = w.cluster[static_cast<size_t>(i)];
    const int width = c.cluster_width(i), size = c.cluster_words(i);
    g.dhidden.assign(area(rows, width), 0.0f);
    g.dZ_rows.assign(area(rows, d), 0.0f);
    classifier_backward(g.dhidden.data(), G.of(cw.words), nullptr, cluster.logits.data(),
                        cluster.hidden.data(), cw.words, rows, width, size);
    classifier_backward(g.dZ_rows.data(), G.of(cw.proj), nullptr, g.dhidden.data(),
                        cluster.Z.data(), cw.proj, rows, d, width);
    for (int r = 0; r < rows; ++r) {
      const int t = cluster.rows[static_cast<size_t>(r)];
      accumulate(dZ + area(t, d), g.dZ_rows.data() + area(r, d), static_cast<size_t>(d));
    }
  }
}

double adaptive_word_readout(const Model& model, int w, std::vector<float>& direction) {
  const Config& c = model.config;
  const Weights& weights = model.weights;
  const int d = c.d_model, words = c.head_words();
  const int head = w < words ? w : words + cluster_of(c, w);
  const float* row =
      w < words ? weights.classifier + area(w, d) : weights.clusters + area(head - words, d);
  direction.assign(row, row + d);
  if (w >= words) {
    // z . (proj^T words[w]) = (z proj^T) . words[w]
    const int i = head - words, width = c.cluster_width(i);
    const ClusterWeights& cluster = weights.cluster[static_cast<size_t>(i)];
    const float* word = cluster.words + area(w - c.cluster_start(i), width);
    for (int k = 0; k < width; ++k) {
      for (int j = 0; j < d; ++j)
        direction[static_cast<size_t>(j)] +=
            word[k] * cluster.proj[area(k, d) + static_cast<size_t>(j)];
    }
  }
  return weights.classifier_bias == nullptr ? 0.0 : weights.classifier_bias[head];
}

}  // namespace nextword
