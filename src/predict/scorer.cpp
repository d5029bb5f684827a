#include "predict/scorer.h"

#include <omp.h>

#include <algorithm>

#include "math/layers.h"
#include "predict/memory_mixture.h"
#include "predict/ranking.h"
#include "text/subword.h"
#include "transformer/transformer.h"

namespace nextword {

// Tokens stream[start .. start+length-1] through the model. With all
// positions, row i predicts token start+i+1, scored from row `first` on;
// otherwise the one row predicts start+length.
struct Scorer::Pass {
  size_t stream;
  int start;
  int length;
  int first = 0;
};

struct Scorer::Group {
  std::vector<Pass> passes;
  bool all_positions;  // logits at every position of each pass, else at its last
};

namespace {

// Tokens per forward pass, at most (with all positions, also logits rows):
// large enough for full-width products, small enough that the logits
// ([rows, V] floats) stay in tens of MB.
constexpr int kPassTokens = 2048;

// A document's token ids: its words', or a subword model's pieces of its
// words joined by spaces.
std::vector<int> document_ids(const Model& model, const Document& document) {
  if (!model.subword) return to_ids(document, model.vocab, model.unk_id, model.bos_id);
  std::string text;
  for (const std::string& word : document) text += (text.empty() ? "" : " ") + word;
  return model.subword->encode(text);
}

}  // namespace

std::vector<int> document_stream(const Model& model, const std::vector<Document>& documents) {
  std::vector<int> stream;
  for (const Document& document : documents) {
    if (document.empty()) continue;
    if (model.bos_id >= 0) stream.push_back(model.bos_id);
    for (int id : document_ids(model, document)) stream.push_back(id);
  }
  return stream;
}

std::vector<std::string> document_tokens(const Model& model, const std::vector<Document>& documents,
                                         const std::vector<int>& stream) {
  // A subword model's tokens are the stream's pieces (bos among them).
  if (model.subword) {
    std::vector<std::string> pieces;
    for (const int id : stream) pieces.emplace_back(model.vocab.word(id));
    return pieces;
  }
  std::vector<std::string> tokens;
  for (const Document& document : documents) {
    if (document.empty()) continue;
    if (model.bos_id >= 0) tokens.push_back(model.config.bos_token);
    tokens.insert(tokens.end(), document.begin(), document.end());
  }
  return tokens;
}

void Scorer::score(std::span<const std::vector<int>> streams,
                   std::vector<std::vector<TokenScore>>& out,
                   const std::function<void(int64_t, int64_t)>& progress, int stride) {
  const int L = model_.config.max_len;
  const bool causal = model_.config.causal;
  const int S = causal ? std::clamp(stride, 1, L) : 1;
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
  // The passes in groups of up to kPassTokens tokens, each group one forward pass.
  std::vector<Group> groups;
  int tokens = 0;
  auto add = [&](const Pass& p, bool all_positions) {
    if (groups.empty() || groups.back().all_positions != all_positions ||
        tokens + p.length > kPassTokens) {
      groups.push_back({{}, all_positions});
      tokens = 0;
    }
    groups.back().passes.push_back(p);
    tokens += p.length;
  };
  // Causal: targets 1 .. min(n-1, L) from one pass over the stream's start.
  if (causal) {
    for (size_t s = 0; s < streams.size(); ++s) {
      const int T = std::min(static_cast<int>(streams[s].size()) - 1, L);
      if (T > 0) add({s, 0, T}, true);
    }
  }
  // The rest, strided: windows of L tokens S apart, each scoring its last S
  // targets (each read after at least L - S + 1 tokens), all positions at once.
  for (size_t s = 0; S > 1 && s < streams.size(); ++s) {
    const int n = static_cast<int>(streams[s].size());
    for (int start = S; start + L - S + 1 < n; start += S) {
      const int last = std::min(start + L, n - 1);
      add({s, start, last - start, L - S}, true);
    }
  }
  // Or one window per target: target t from the L tokens before it.
  for (size_t s = 0; S == 1 && s < streams.size(); ++s) {
    const int n = static_cast<int>(streams[s].size());
    for (int t = causal ? L + 1 : 1; t < n; ++t) {
      if (streams[s][static_cast<size_t>(t)] == model_.bos_id) continue;
      const int start = std::max(0, t - L);
      add({s, start, t - start}, false);
    }
  }
  // Groups are independent: with several, each thread runs whole groups on
  // its own (one parallel region, not one per product); a lone group splits
  // its products' rows over the threads instead. Either way a group's
  // arithmetic is the same.
  const auto G = static_cast<int>(groups.size());
  const int workers = std::max(1, std::min(G, omp_get_max_threads()));
  if (workspaces_.size() < static_cast<size_t>(workers)) workspaces_.resize(workers);
#pragma omp parallel for schedule(dynamic, 1) num_threads(workers) if (G > 1)
  for (int g = 0; g < G; ++g) {
    const Group& group = groups[static_cast<size_t>(g)];
    run(group, streams, workspaces_[static_cast<size_t>(omp_get_thread_num())], out);
#pragma omp critical(nextword_scorer_progress)
    {
      for (const Pass& p : group.passes) done += group.all_positions ? p.length - p.first : 1;
      if (progress) progress(std::min(done, total), total);
    }
  }
  for (std::vector<TokenScore>& scores : out) {
    std::erase_if(scores, [](const TokenScore& score) { return score.rank == 0; });
  }
}

void Scorer::run(const Group& group, std::span<const std::vector<int>> streams, Workspace& w,
                 std::vector<std::vector<TokenScore>>& out) const {
  const bool all_positions = group.all_positions;
  w.ids.clear();
  w.lengths.clear();
  // targets[j] = (stream, position) that logits row j predicts, from the
  // position positions[j] of the group's passes (with all positions)
  std::vector<std::pair<size_t, int>> targets;
  std::vector<int> positions;
  std::vector<const Pass*> passes;  // of each target
  int row = 0;                      // the pass's first position
  for (const Pass& p : group.passes) {
    const std::vector<int>& stream = streams[p.stream];
    w.ids.insert(w.ids.end(), stream.begin() + p.start, stream.begin() + p.start + p.length);
    w.lengths.push_back(p.length);
    const int first = all_positions ? p.start + 1 : p.start + p.length;
    for (int t = first + p.first; t <= p.start + p.length; ++t) {
      targets.emplace_back(p.stream, t);
      positions.push_back(row + (t - first));
      passes.push_back(&p);
    }
    row += p.length;
  }
  // Only the targets' rows through the classifier, which costs more than
  // the layers below it: a strided window scores its last S.
  ForwardOptions options;
  options.all_positions = all_positions;
  if (all_positions) options.rows = positions;
  forward(model_, w.state, w.ids.data(), w.lengths, options);
  const int V = model_.config.vocab_size;
  const auto rows = static_cast<int>(targets.size());
#pragma omp parallel for schedule(static) if (rows >= 8)
  for (int r = 0; r < rows; ++r) {
    const auto [s, t] = targets[static_cast<size_t>(r)];
    const int id = streams[s][static_cast<size_t>(t)];
    if (id == model_.bos_id) continue;
    float* logits = w.state.logits.data() + area(r, V);
    // The memory reads the window's tokens before the target.
    const Pass& p = *passes[static_cast<size_t>(r)];
    const std::vector<int>& stream = streams[s];
    mix_memory(model_,
               std::span<const int>(stream).subspan(static_cast<size_t>(p.start),
                                                    static_cast<size_t>(t - p.start)),
               std::span<float>(logits, static_cast<size_t>(V)));
    TokenScore& score = out[s][static_cast<size_t>(t) - 1];
    score.logprob = static_cast<double>(logits[id]) - log_sum_exp(logits, V);
    score.rank = 1 + rank_of(model_, logits, id, V);
  }
}

}  // namespace nextword
