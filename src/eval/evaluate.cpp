#include "eval/evaluate.h"

#include <cmath>
#include <memory>

#include "predict/scorer.h"
#include "predict/unknown_words.h"
#include "text/documents.h"

namespace nextword {

double EvalResult::perplexity() const { return std::exp(cross_entropy); }
double EvalResult::unknown_rate() const {
  return tokens > 0 ? static_cast<double>(unknown) / static_cast<double>(tokens) : 0;
}
double EvalResult::top1_accuracy() const {
  return tokens > 0 ? static_cast<double>(top1) / static_cast<double>(tokens) : 0;
}
double EvalResult::top5_accuracy() const {
  return tokens > 0 ? static_cast<double>(top5) / static_cast<double>(tokens) : 0;
}

EvalResult evaluate(const Model& model, const std::vector<Document>& documents,
                    const std::function<void(int64_t, int64_t)>& progress, int stride) {
  EvalResult result;
  for (const Document& document : documents) result.documents += !document.empty();
  const std::vector<std::vector<int>> stream{document_stream(model, documents)};
  std::vector<std::vector<TokenScore>> scores;
  Scorer(model).score(stream, scores, progress, stride);
  std::unique_ptr<UnknownWords> unknown_words;
  add_spelling(model, unknown_words, document_tokens(model, documents, stream[0]), stream[0],
               scores[0]);
  double ce_sum = 0;
  for (const TokenScore& s : scores[0]) {
    const bool unknown = stream[0][static_cast<size_t>(s.position)] == model.unk_id;
    result.unknown += unknown;
    result.top1 += !unknown && s.rank <= 1;
    result.top5 += !unknown && s.rank <= 5;
    ce_sum -= s.logprob;
    ++result.tokens;
  }
  result.cross_entropy = result.tokens > 0 ? ce_sum / static_cast<double>(result.tokens) : 0;
  return result;
}

}  // namespace nextword
