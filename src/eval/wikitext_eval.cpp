#include "eval/wikitext_eval.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>
#include <unordered_map>

#include "complete/context_cache.h"
#include "math/layers.h"
#include "predict/memory_mixture.h"
#include "predict/ranking.h"
#include "transformer/blocks.h"
#include "transformer/transformer.h"

namespace nextword {
namespace {

// Tokens per forward pass, and floats of logits per pass, at most (a pass
// holds at least one window).
constexpr int kPassTokens = 2048;
constexpr size_t kPassLogits = size_t{1} << 24;
// Ranks are counted up to this: top-5 needs no more.
constexpr int kRankLimit = 5;

// A model token of a stream.
struct Token {
  int id = 0;           // the model's id (unk_id for a word outside the vocabulary)
  bool scored = false;  // a scored WikiText word (never bos, never <unk>)
  bool oov = false;     // scored, and outside the vocabulary
  size_t document = 0;  // in Wikitext::documents
  size_t position = 0;  // in the document
  const std::string* word = nullptr;
};

// What the model reads: one stream per document after bos, or, for a model
// without bos, all of them back to back.
using Stream = std::vector<Token>;

std::vector<Stream> streams_of(const Model& model, const Wikitext& text) {
  std::vector<Stream> streams;
  const bool bos = model.bos_id >= 0;
  for (size_t d = 0; d < text.documents.size(); ++d) {
    if (streams.empty() || bos) streams.emplace_back();
    Stream& stream = streams.back();
    if (bos) stream.push_back({model.bos_id, false, false, d, 0, nullptr});
    const WikitextDocument& document = text.documents[d];
    for (size_t i = 0; i < document.tokens.size(); ++i) {
      const std::string& word = document.tokens[i];
      int id = model.vocab.find(word);
      const bool scored = document.scored[i] != 0;
      const bool known = id >= 0 && !model.is_special(id);
      if (!known) id = model.unk_id;
      stream.push_back({id, scored, scored && !known, d, i, &word});
    }
  }
  return streams;
}

// Tokens stream[start .. start+length-1] through the model: row r predicts
// token start+r+1; rows from `first` on are scored.
struct Pass {
  size_t stream;
  int start, length, first;
};

// The windows of the header's rule.
std::vector<Pass> passes_of(const Model& model, const std::vector<Stream>& streams) {
  const int L = model.config.max_len, S = std::max(1, L / 2);
  std::vector<Pass> passes;
  for (size_t s = 0; s < streams.size(); ++s) {
    const int n = static_cast<int>(streams[s].size());
    if (!model.config.causal) {
      for (int t = 1; t < n; ++t) {
        if (!streams[s][static_cast<size_t>(t)].scored) continue;
        const int start = std::max(0, t - L);
        passes.push_back({s, start, t - start, t - start - 1});
      }
      continue;
    }
    for (int start = 0;; start += S) {
      const int first_target = start == 0 ? 1 : start + L - S + 1;
      if (first_target > n - 1) break;
      const int last_target = std::min(start + L, n - 1);
      passes.push_back({s, start, last_target - start, first_target - start - 1});
      if (last_target == n - 1) break;
    }
  }
  return passes;
}

// A scored row of a forward pass: the target it predicts.
struct Row {
  const Token* target;
  int x_row;       // its row of the pass's residual stream
  int pass_start;  // the row where its pass starts (the memory reads from there to x_row)
};

// A row's mixture with the memory, when the model has one.
struct MemoryParts {
  double transformer_log_prob = 0, memory_log_prob = 0;
  int bucket = -1;
};

class Evaluation {
 public:
  Evaluation(const Model& model, const Lexicon* lexicon, const WikitextEvalOptions& options,
             const WikitextEvalHooks& hooks)
      : model_(model),
        options_(options),
        hooks_(hooks),
        unknown_words_(model, lexicon),
        cache_(static_cast<size_t>(std::max(options.cache_size, 0)), options.cache_sharpness) {}

  void run(const std::vector<Stream>& streams, WikitextEvalResult& result);
  const UnknownWords& unknown_words() const { return unknown_words_; }

 private:
  void run_pass_group(const std::vector<Stream>& streams, std::span<const Pass> group);
  // Each row's ln p of its target by the model alone (its lse_ and, unless
  // outside the vocabulary, its rank), the rows in parallel.
  void model_scores();
  void score_rows();
  void score_rows_with_cache();
  // The candidates ranked before target index `target` (a vocabulary id, or
  // V + k for the document's k-th word outside it) by the mixture, at most
  // kRankLimit; -1 when the target is no candidate.
  int mixed_rank(const float* logits, double lse, size_t target);
  size_t oov_index(const std::string& word);
  // unk_log_prob: for a word outside the vocabulary, the part of log_prob
  // that is not ln q(word).
  void add(const Token& token, double log_prob, int rank, double unk_log_prob = 0,
           const MemoryParts& parts = {});

  const Model& model_;
  const WikitextEvalOptions& options_;
  const WikitextEvalHooks& hooks_;
  UnknownWords unknown_words_;
  WikitextEvalResult* result_ = nullptr;
  int64_t done_ = 0, total_ = 0;
  // The pass group's buffers.
  RunState state_;
  std::vector<int> ids_, lengths_;
  std::vector<Row> rows_;
  std::vector<float> Z_, logits_;
  std::vector<double> lse_, model_log_probs_;
  std::vector<int> ranks_;
  std::vector<MemoryParts> memory_parts_;
  // The cache's document, and its words outside the vocabulary.
  ContextCache cache_;
  size_t cache_document_ = std::numeric_limits<size_t>::max();
  size_t cache_uses_ = 0;
  std::unordered_map<std::string, size_t> oov_index_;  // word -> k
  std::vector<double> oov_log_q_;                      // [k] ln q(word)
  std::vector<double> cache_p_;                        // [V + K] p_cache
};

void Evaluation::add(const Token& token, double log_prob, int rank, double unk_log_prob,
                     const MemoryParts& parts) {
  WikitextEvalResult& r = *result_;
  // Its band: the last (outside) for a word outside the vocabulary, else
  // the band whose ids hold it.
  LossBand* band = &r.bands.back();
  if (!token.oov) {
    band = &*std::find_if(r.bands.begin(), r.bands.end(),
                          [&](const LossBand& b) { return token.id < b.end_id; });
  }
  ++band->tokens;
  band->nats -= log_prob;
  if (token.oov) band->unk_nats -= unk_log_prob;
  ++r.model_tokens;
  r.oov += token.oov;
  r.total_nats -= log_prob;
  r.top1 += rank == 1;
  r.top5 += rank >= 1 && rank <= 5;
  if (hooks_.each) {
    hooks_.each({token.document, token.position, log_prob, token.oov, rank,
                 parts.transformer_log_prob, parts.memory_log_prob, parts.bucket});
  }
}

void Evaluation::run(const std::vector<Stream>& streams, WikitextEvalResult& result) {
  result_ = &result;
  for (const Stream& stream : streams) {
    for (const Token& token : stream) total_ += token.scored;
  }
  // The file's first token, when no bos comes before it: p = 1/V, a miss.
  if (model_.bos_id < 0 && !streams.empty() && !streams[0].empty() && streams[0][0].scored) {
    const Token& first = streams[0][0];
    const double log_q = first.oov ? unknown_words_.log_q(*first.word) : 0;
    const double uniform = -std::log(static_cast<double>(model_.config.vocab_size));
    add(first, uniform + log_q, 0, uniform);
    result.model_only_nats = result.total_nats;
    ++done_;
  }
  const std::vector<Pass> passes = passes_of(model_, streams);
  const auto V = static_cast<size_t>(model_.config.vocab_size);
  for (size_t begin = 0; begin < passes.size();) {
    size_t end = begin, tokens = 0, rows = 0;
    while (end < passes.size()) {
      const Pass& p = passes[end];
      const auto more = static_cast<size_t>(p.length - p.first);
      if (end > begin &&
          (tokens + static_cast<size_t>(p.length) > kPassTokens || (rows + more) * V > kPassLogits))
        break;
      tokens += static_cast<size_t>(p.length);
      rows += more;
      ++end;
    }
    run_pass_group(streams, std::span<const Pass>(passes).subspan(begin, end - begin));
    begin = end;
  }
}

void Evaluation::run_pass_group(const std::vector<Stream>& streams, std::span<const Pass> group) {
  ids_.clear();
  lengths_.clear();
  rows_.clear();
  int x_row = 0;
  for (const Pass& p : group) {
    const Stream& stream = streams[p.stream];
    for (int i = 0; i < p.length; ++i) ids_.push_back(stream[static_cast<size_t>(p.start + i)].id);
    lengths_.push_back(p.length);
    for (int r = p.first; r < p.length; ++r) {
      const Token& target = stream[static_cast<size_t>(p.start + r + 1)];
      if (target.scored) rows_.push_back({&target, x_row + r, x_row});
    }
    x_row += p.length;
  }
  if (rows_.empty()) return;
  // The residual stream of every position; the classifier only on the
  // scored rows (final norm, then logits: what forward() does per row).
  forward(model_, state_, ids_.data(), lengths_);
  const int d = model_.config.d_model, V = model_.config.vocab_size;
  const auto R = static_cast<int>(rows_.size());
  Z_.resize(area(R, d));
  logits_.resize(area(R, V));
  for (int r = 0; r < R; ++r) {
    const float* x = state_.X_out.data() + area(rows_[static_cast<size_t>(r)].x_row, d);
    std::copy(x, x + d, Z_.data() + area(r, d));
  }
  logits_forward(logits_.data(), Z_.data(), model_, R);
  model_scores();
  if (options_.cache) {
    score_rows_with_cache();
  } else {
    score_rows();
  }
  done_ += R;
  if (hooks_.progress) hooks_.progress(done_, total_);
}

void Evaluation::model_scores() {
  const int V = model_.config.vocab_size;
  const auto R = static_cast<int>(rows_.size());
  lse_.resize(rows_.size());
  model_log_probs_.resize(rows_.size());
  memory_parts_.assign(rows_.size(), {});
  ranks_.resize(rows_.size());
#pragma omp parallel for schedule(static) if (R >= 8)
  for (int r = 0; r < R; ++r) {
    const auto row = static_cast<size_t>(r);
    const Token& target = *rows_[row].target;
    float* logits = logits_.data() + area(r, V);
    if (model_.memory) {
      // The mixture replaces the logits (for the ranks and the cache); the
      // target's ln p is the mixture's in double.
      const Memory& memory = *model_.memory;
      const std::span<float> row_logits(logits, static_cast<size_t>(V));
      const std::span<const int> context(
          ids_.data() + rows_[row].pass_start,
          static_cast<size_t>(rows_[row].x_row - rows_[row].pass_start + 1));
      const MixedRow mixed = mixed_row(memory, context, row_logits, true);
      memory_parts_[row] = {static_cast<double>(logits[target.id]) - mixed.exact_log_normalizer,
                            std::log(memory.probability(mixed.context, target.id)),
                            mixed.context.bucket};
      const double log_prob = mixed_log_probability(memory, mixed, row_logits, target.id);
      write_mixed_logits(memory, mixed, row_logits);
      lse_[row] = 0;  // the mixture's logits are ln p: their normalizer is 1
      model_log_probs_[row] = log_prob;
    } else {
      lse_[row] = log_sum_exp(logits, V);
      model_log_probs_[row] = static_cast<double>(logits[target.id]) - lse_[row];
    }
    ranks_[row] = target.oov ? 0 : 1 + rank_of(model_, logits, target.id, kRankLimit);
  }
}

void Evaluation::score_rows() {
  for (size_t r = 0; r < rows_.size(); ++r) {
    const Token& target = *rows_[r].target;
    const double log_q = target.oov ? unknown_words_.log_q(*target.word) : 0;
    add(target, model_log_probs_[r] + log_q, ranks_[r], model_log_probs_[r], memory_parts_[r]);
  }
}

size_t Evaluation::oov_index(const std::string& word) {
  const auto [at, fresh] = oov_index_.try_emplace(word, oov_log_q_.size());
  if (fresh) oov_log_q_.push_back(unknown_words_.log_q(word));
  return at->second;
}

void Evaluation::score_rows_with_cache() {
  const int d = model_.config.d_model, V = model_.config.vocab_size;
  const double weight = options_.cache_weight, keep = 1 - weight;
  for (size_t r = 0; r < rows_.size(); ++r) {
    const Token& target = *rows_[r].target;
    if (target.document != cache_document_) {
      cache_ = ContextCache(static_cast<size_t>(options_.cache_size), options_.cache_sharpness);
      cache_document_ = target.document;
      cache_uses_ = 0;
      oov_index_.clear();
      oov_log_q_.clear();
    }
    const float* logits = logits_.data() + area(static_cast<int>(r), V);
    const std::span<const float> h(Z_.data() + area(static_cast<int>(r), d),
                                   static_cast<size_t>(d));
    const double lse = lse_[r];
    // The same arithmetic as score_rows, so that weight 0 gives its bits.
    const size_t index = target.oov ? static_cast<size_t>(V) + oov_index(*target.word)
                                    : static_cast<size_t>(target.id);
    const double log_q = target.oov ? oov_log_q_[index - static_cast<size_t>(V)] : 0;
    const double model_log_prob = model_log_probs_[r] + log_q;
    double log_prob = model_log_prob;
    int rank = ranks_[r];
    result_->model_only_nats -= model_log_prob;
    result_->model_only_top1 += rank == 1;
    result_->model_only_top5 += rank >= 1 && rank <= 5;
    if (cache_uses_ > 0) {
      cache_p_.assign(static_cast<size_t>(V) + oov_log_q_.size(), 0);
      cache_.add_probabilities(h, 1, cache_p_);
      log_prob = log_add(std::log(keep) + model_log_prob, std::log(weight * cache_p_[index]));
      const int before = mixed_rank(logits, lse, index);
      rank = before < 0 ? 0 : 1 + before;
    }
    add(target, log_prob, rank, log_prob - log_q, memory_parts_[r]);
    cache_.add(h, static_cast<int>(index));
    ++cache_uses_;
  }
}

int Evaluation::mixed_rank(const float* logits, double lse, size_t target) {
  const auto V = static_cast<size_t>(model_.config.vocab_size);
  const double weight = options_.cache_weight, keep = 1 - weight;
  const float unk_logit = logits[model_.unk_id];
  // Candidate i's p, and the logit that breaks a tie (the model's order,
  // then the index: with weight 0 this is rank_of's order exactly).
  auto p_of = [&](size_t i) {
    const double cached = weight * cache_p_[i];
    const double log_model = i < V ? static_cast<double>(logits[i]) - lse
                                   : static_cast<double>(unk_logit) - lse + oov_log_q_[i - V];
    return keep * std::exp(log_model) + cached;
  };
  auto tie_logit = [&](size_t i) { return i < V ? logits[i] : -std::numeric_limits<float>::max(); };
  if (target >= V && weight * cache_p_[target] == 0) return -1;
  const double p = p_of(target);
  const float tie = tie_logit(target);
  // A word the cache gives nothing ranks before the target only if its
  // logit reaches this (a margin far above rounding); the rest are checked.
  const double cut = lse + std::log(p / keep) - 1e-6;
  int before = 0;
  for (size_t i = 0; i < cache_p_.size() && before < kRankLimit; ++i) {
    if (i == target) continue;
    const bool cached = weight * cache_p_[i] > 0;
    if (i < V) {
      if (model_.is_special(static_cast<int>(i))) continue;
      if (!cached && static_cast<double>(logits[i]) < cut) continue;
    } else if (!cached) {
      continue;
    }
    const double q = p_of(i);
    const float t = tie_logit(i);
    before += q > p || (q == p && (t > tie || (t == tie && i < target)));
  }
  return before;
}

}  // namespace

std::vector<LossBand> loss_bands(const Model& model) {
  const Config& c = model.config;
  std::vector<LossBand> bands;
  if (!c.adaptive()) {
    bands.push_back({"vocabulary", 0, c.vocab_size});
  } else {
    bands.push_back({"head", 0, c.head_words()});
    for (int i = 0; i < c.clusters(); ++i) {
      const int end = i + 1 < c.clusters() ? c.cluster_start(i + 1) : c.vocab_size;
      bands.push_back({"cluster " + std::to_string(i + 1), c.cluster_start(i), end});
    }
  }
  bands.push_back({"outside", 0, 0});
  return bands;
}

double WikitextEvalResult::cross_entropy() const {
  return scored > 0 ? total_nats / static_cast<double>(scored) : 0;
}
double WikitextEvalResult::perplexity() const { return std::exp(cross_entropy()); }
double WikitextEvalResult::model_only_perplexity() const {
  return scored > 0 ? std::exp(model_only_nats / static_cast<double>(scored)) : 0;
}
double WikitextEvalResult::oov_rate() const {
  return model_tokens > 0 ? static_cast<double>(oov) / static_cast<double>(model_tokens) : 0;
}
double WikitextEvalResult::top1_accuracy() const {
  return model_tokens > 0 ? static_cast<double>(top1) / static_cast<double>(model_tokens) : 0;
}
double WikitextEvalResult::top5_accuracy() const {
  return model_tokens > 0 ? static_cast<double>(top5) / static_cast<double>(model_tokens) : 0;
}

WikitextEvalResult evaluate_wikitext(const Model& model, const Wikitext& text,
                                     const Lexicon* lexicon, const WikitextEvalOptions& options,
                                     const WikitextEvalHooks& hooks) {
  if (options.cache) {
    if (options.cache_size < 1) throw std::invalid_argument("cache size below 1");
    if (!(options.cache_weight >= 0 && options.cache_weight < 1))
      throw std::invalid_argument("cache weight outside [0, 1)");
    if (!(options.cache_sharpness >= 0) || std::isinf(options.cache_sharpness))
      throw std::invalid_argument("cache sharpness negative or not finite");
  }
  WikitextEvalResult result;
  result.bands = loss_bands(model);
  result.documents = static_cast<int64_t>(text.documents.size());
  result.wikitext_tokens = text.wikitext_tokens;
  result.unknown = text.unknown;
  result.heading_marks = text.heading_marks;
  result.scored = text.scored();
  Evaluation evaluation(model, lexicon, options, hooks);
  evaluation.run(streams_of(model, text), result);
  result.lexicon = evaluation.unknown_words().uses_lexicon();
  result.lexicon_words = evaluation.unknown_words().lexicon_words();
  return result;
}

}  // namespace nextword
