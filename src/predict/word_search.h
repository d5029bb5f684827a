// Whole next words from a subword model. A word is a piece that
// begins one (its text starts with a space, a line break or a punctuation
// mark, or it is a byte piece of such a byte, or <unk>, <s>, </s>) and the
// pieces after it up to the next piece that begins a word. Its probability
// is the sum, over the piece sequences that spell it, of P(the pieces) x
// P(the piece after them begins a word).
//
// The search is a beam over pieces: the `beam` most probable partial words
// are extended by one piece at each depth, up to `max_pieces` pieces. A
// word's probability sums the spellings the beam reached, so it is a lower
// bound on the true one, and exact when the beam held every partial word
// of up to max_pieces pieces and no longer one has any probability.
//
// The partial words of one depth run through the model side by side, as
// one batch that reads the weights once (Predictor::grow_branches), where
// the predictor's key/value cache serves; else one at a time. Either way
// the words and probabilities are the same bits.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "predict/predictor.h"

namespace nextword {

struct WordSearch {
  int beam = 16;       // partial words kept at each depth
  int max_pieces = 8;  // longest word, in pieces
  // The partial words of a depth in one pass where the cache serves, or
  // (false) each through Predictor::next_logits alone: the reference the
  // batched search is tested against.
  bool side_by_side = true;
};

// Which pieces of a subword model's vocabulary begin a word (by id).
std::vector<bool> word_beginnings(const Model& model);

// The k most probable next words after `context` (a subword model's
// pieces), best first (equal probabilities in byte order of the words);
// words of <unk>, <s>, </s> or only white space are never listed, though
// their probability counts. The context keeps its last max_len -
// max_pieces pieces when it is longer. With a `prefix` (the start of a
// word being typed), only words that start with it (ASCII letters in either
// case) are searched and listed: the beam holds the partial words that can
// still reach it.
std::vector<NextWord> next_words(Predictor& predictor, const Encoded& context, int k,
                                 const WordSearch& search = {}, std::string_view prefix = {});

// The words after `text` that start with `prefix`, every one the search
// finds, best first: `complete`'s on a subword model. White space ending
// the text is the space the next word's first piece begins with.
std::vector<NextWord> words_after(Predictor& predictor, std::string_view text,
                                  std::string_view prefix);

}  // namespace nextword
