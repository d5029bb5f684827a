#include "predict/word_scores.h"

#include <algorithm>

#include "predict/word_search.h"
#include "text/subword.h"

namespace nextword {

std::vector<WordScore> word_scores(const Model& model, const std::vector<std::string>& tokens,
                                   const std::vector<int>& ids,
                                   const std::vector<TokenScore>& scores) {
  std::vector<WordScore> words;
  if (!model.config.subword()) {
    for (const TokenScore& s : scores) {
      const auto t = static_cast<size_t>(s.position);
      words.push_back({t, tokens[t], {ids[t]}, s.logprob, s.rank, ids[t] == model.unk_id});
    }
    return words;
  }
  const std::vector<bool> begins = word_beginnings(model);
  for (const TokenScore& s : scores) {
    const auto t = static_cast<size_t>(s.position);
    const int id = ids[t];
    if (words.empty() || begins[static_cast<size_t>(id)]) {
      words.push_back({t, "", {}, 0, 0, false});
    }
    WordScore& w = words.back();
    w.word += model.subword->text(id);
    w.ids.push_back(id);
    w.logprob += s.logprob;
    w.unknown = w.unknown || id == model.unk_id;
  }
  for (WordScore& w : words) {
    if (w.word.starts_with(' ')) w.word.erase(0, 1);
  }
  return words;
}

void rank_words(Predictor& predictor, const std::vector<int>& ids, std::vector<WordScore>& words) {
  const WordSearch search;
  const int all = search.beam * search.max_pieces;
  for (WordScore& w : words) {
    Encoded context;
    context.ids.assign(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(w.position));
    const std::vector<NextWord> listed = next_words(predictor, context, all, search);
    const auto at = std::find_if(listed.begin(), listed.end(),
                                 [&](const NextWord& n) { return n.word == w.word; });
    w.rank = 1 + static_cast<int>(at - listed.begin());
  }
}

}  // namespace nextword
