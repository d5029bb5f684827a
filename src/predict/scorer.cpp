#include "predict/scorer.h"

#include <algorithm>

#include "math/layers.h"
#include "predict/ranking.h"
#include "transformer/transformer.h"

namespace nextword {

// Tokens stream[start .. start+length-1] through the model. With all
// positions, row i predicts token start+i+1 (for every i up to the
// window's end); otherwise the one row predicts start+length.
struct Scorer::Pass {
  size_t stream;
  int start;
  int length;
};

namespace {

// Tokens per forward pass, at most (with all positions, also logits rows):
// large enough for full-width products, small enough that the logits
// ([rows, V] floats) stay in tens of MB.
constexpr int kPassTokens = 2048;

}  // namespace

std::vector<int> document_stream(const Model& model, const std::vector<Document>& documents) {
  std::vector<int> stream;
  for (const Document& document : documents) {
    if (document.empty()) continue;
    if (model.bos_id >= 0) stream.push_back(model.bos_id);
    for (int id : to_ids(document, model.vocab, model.unk_id, model.bos_id)) stream.push_back(id);
  }
  return stream;
}

void Scorer::score(std::span<const std::vector<int>> streams,
                   std::vector<std::vector<TokenScore>>& out,
                   const std::function<void(int64_t, int64_t)>& progress) {
  const int L = model_.config.max_len;
  const bool causal = model_.config.causal;
  // Every position after the first gets a slot; bos targets keep rank 0
  // and are dropped at the end.
  out.assign(streams.size(), {});
  int64_t total = 0, done = 0;
  for (size_t s = 0; s < streams.size(); ++s) {
    const int n = static_cast<int>(streams[s].size());
    out[s].resize(static_cast<size_t>(std::max(n - 1, 0)));
    for (int t = 1; t < n; ++t) {
      out[s][static_cast<size_t>(t) - 1].position = t;
      total += streams[s][static_cast<size_t>(t)] != model_.bos_id;
    }
  }
  std::vector<Pass> passes;
  int tokens = 0;
  auto flush = [&](bool all_positions) {
    if (passes.empty()) return;
    run(passes, streams, all_positions, out);
    for (const Pass& p : passes) done += all_positions ? p.length : 1;
    passes.clear();
    tokens = 0;
    if (progress) progress(std::min(done, total), total);
  };
  auto add = [&](const Pass& p, bool all_positions) {
    if (tokens + p.length > kPassTokens) flush(all_positions);
    passes.push_back(p);
    tokens += p.length;
  };
  // Causal: targets 1 .. min(n-1, L) from one pass over the stream's start.
  if (causal) {
    for (size_t s = 0; s < streams.size(); ++s) {
      const int T = std::min(static_cast<int>(streams[s].size()) - 1, L);
      if (T > 0) add({s, 0, T}, true);
    }
    flush(true);
  }
  // The rest: target t from the window of the L tokens before it.
  for (size_t s = 0; s < streams.size(); ++s) {
    const int n = static_cast<int>(streams[s].size());
    for (int t = causal ? L + 1 : 1; t < n; ++t) {
      if (streams[s][static_cast<size_t>(t)] == model_.bos_id) continue;
      const int start = std::max(0, t - L);
      add({s, start, t - start}, false);
    }
  }
  flush(false);
  for (std::vector<TokenScore>& scores : out) {
    std::erase_if(scores, [](const TokenScore& score) { return score.rank == 0; });
  }
}

void Scorer::run(std::span<const Pass> passes, std::span<const std::vector<int>> streams,
                 bool all_positions, std::vector<std::vector<TokenScore>>& out) {
  ids_.clear();
  lengths_.clear();
  // targets[row] = (stream, position) that logits row `row` predicts
  std::vector<std::pair<size_t, int>> targets;
  for (const Pass& p : passes) {
    const std::vector<int>& stream = streams[p.stream];
    ids_.insert(ids_.end(), stream.begin() + p.start, stream.begin() + p.start + p.length);
    lengths_.push_back(p.length);
    for (int t = all_positions ? p.start + 1 : p.start + p.length; t <= p.start + p.length; ++t) {
      targets.emplace_back(p.stream, t);
    }
  }
  ForwardOptions options;
  options.all_positions = all_positions;
  forward(model_, state_, ids_.data(), lengths_, options);
  const int V = model_.config.vocab_size;
  const auto rows = static_cast<int>(targets.size());
#pragma omp parallel for schedule(static) if (rows >= 8)
  for (int r = 0; r < rows; ++r) {
    const auto [s, t] = targets[static_cast<size_t>(r)];
    const int id = streams[s][static_cast<size_t>(t)];
    if (id == model_.bos_id) continue;
    const float* logits = state_.logits.data() + area(r, V);
    TokenScore& score = out[s][static_cast<size_t>(t) - 1];
    score.logprob = static_cast<double>(logits[id]) - log_sum_exp(logits, V);
    score.rank = 1 + rank_of(model_, logits, id, V);
  }
}

}  // namespace nextword
