// Words outside a model's vocabulary, given a real probability: `score`,
// `eval` and `eval --wikitext` score such a word
//
//   ln p(unk_token | context) + ln q(word)
//
// with q a distribution over every string that sums to at most 1, so the
// vocabulary's words and the spelled ones together never exceed 1.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/lexicon.h"
#include "model/model_file.h"
#include "predict/scorer.h"
#include "text/spelling.h"

namespace nextword {

// ln(e^a + e^b), exactly a when b is -infinity.
double log_add(double a, double b);

// q(w) for a word outside a model's vocabulary:
//
//   q(w) = lambda count(w) / C + (1 - lambda) q_char(w),   lambda = 0.5
//
// count(w) the lexicon's count of w (0 when it has none), C the summed count
// of the lexicon's words outside the vocabulary, q_char a Spelling of order 5
// trained on those same (word, count) pairs. Both parts sum to at most 1
// over the words outside the vocabulary, so q does. Without a lexicon (or
// with none of its words outside the vocabulary) q = q_char of an untrained
// Spelling: uniform bytes, q = 1/256 x (1/257)^length.
class UnknownWords {
 public:
  static constexpr double kLexiconWeight = 0.5;  // lambda
  static constexpr int kOrder = 5;

  // `lexicon` may be null; it is not kept. The Spelling is trained at the
  // first log_q.
  UnknownWords(const Model& model, const Lexicon* lexicon);

  // ln q(word).
  double log_q(std::string_view word);

  bool uses_lexicon() const { return total_ > 0; }
  // The lexicon's words outside the vocabulary, and C.
  size_t lexicon_words() const { return counts_.size(); }
  double lexicon_count() const { return total_; }
  // Whether log_q has been asked, so the Spelling trained.
  bool spelling_built() const { return spelling_ != nullptr; }

 private:
  std::vector<std::pair<std::string, int64_t>> counts_;  // sorted by word
  double total_ = 0;                                     // C
  std::unique_ptr<Spelling> spelling_;
};

// Whether the token written `token` with id `id` is a word outside the
// vocabulary: unk_id, but not the unk token itself (a text's own `<unk>`,
// WikiText's stand-in, keeps p(unk)).
bool spelled_out(const Model& model, const std::string& token, int id);

// What `score`, `eval` and serve's score share: a stream's scores (Scorer)
// with ln q(word) added to every word outside the vocabulary. tokens[i] is
// the word written at ids[i]. `words` is made at the first such word, from
// `lexicon` when given, else from the lexicon beside the model's vocabulary
// (when there), so a text the vocabulary covers reads no lexicon.
void add_spelling(const Model& model, std::unique_ptr<UnknownWords>& words,
                  std::span<const std::string> tokens, std::span<const int> ids,
                  std::vector<TokenScore>& scores, const Lexicon* lexicon = nullptr);

}  // namespace nextword
