// Scores as `score` prints them: one per word. A word-level model's words
// are its tokens; a subword model's word is a piece that begins one
// (predict/word_search.h) and the pieces after it up to the next, scored
// with the sum of its pieces' log-probabilities. The first piece carries
// the word boundary (a piece that begins a word), so the words' scores sum
// to the text's, and a perplexity per word compares with a word-level
// model's over the same words.
#pragma once

#include <string>
#include <vector>

#include "predict/predictor.h"
#include "predict/scorer.h"

namespace nextword {

struct WordScore {
  size_t position = 0;   // its first token's index in the stream
  std::string word;      // as written: a token, or its pieces' text without its leading space
  std::vector<int> ids;  // its token ids (one for a word-level model)
  double logprob = 0;
  int rank = 0;  // word-level: TokenScore's; subword: 0 until rank_words
  bool unknown = false;
};

// The words of one scored stream (`tokens` and `ids` as the scorer read
// them, `scores` its TokenScores in position order).
std::vector<WordScore> word_scores(const Model& model, const std::vector<std::string>& tokens,
                                   const std::vector<int>& ids,
                                   const std::vector<TokenScore>& scores);

// A subword model's word ranks: 1 + the words the search (next_words)
// lists before it after the pieces before it, by the search's probability
// of a next word; a word the search does not list gets 1 + all it lists (its
// rank is at least that). A search per word: `score` ranks only for JSON.
void rank_words(Predictor& predictor, const std::vector<int>& ids, std::vector<WordScore>& words);

}  // namespace nextword
