// Keeping generated text out of loops. Greedy decoding of a small model
// falls into them ("a population of the city of the city of the city ..."),
// so generation guards against them unless told not to (`generate
// --greedy`): the next word may not complete a run of `ngram` words that
// already stands in the last `window` tokens of the text, the prompt
// included (Hugging Face's no_repeat_ngram_size, counted in words); and,
// when asked, a token among them has `penalty` taken off its logit (a
// presence penalty: a shift, so the same on logits and on log-probabilities).
//
// A subword model's words are word_search.h's: a piece that begins a word
// and the pieces after it up to the next one that does. Words are compared
// by their text without the white space before them (and curly quotes read
// as straight ones), whatever pieces spell it: a word after a line break is
// the same word after a space, and white space alone is no word. The ban
// falls on the first piece with more than white space of the run's last
// word, as it stood before: every piece that writes that text, whatever
// white space it starts with. A piece that goes on with a word already
// begun is never banned.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "model/model_file.h"

namespace nextword {

struct RepetitionGuard {
  int ngram = 4;         // no run of this many words twice (0: off)
  float penalty = 0.0f;  // taken off the logit of a token in the window (0: off)
  int window = 256;      // the tokens looked back over (the text's last ones)
  bool on() const { return ngram > 0 || penalty > 0.0f; }
  static RepetitionGuard off() { return {.ngram = 0, .penalty = 0.0f, .window = 256}; }
};

// The guard's verdict on the token after a text, one step at a time.
class Repetition {
 public:
  // A model of words: every token a word of its own.
  explicit Repetition(const RepetitionGuard& guard) : guard_(guard) {}
  // A model of pieces: `begins[id]`, whether piece id begins a word;
  // `texts[id]`, what it writes as a word is compared (empty: white space
  // alone, or a control piece, which are no word).
  Repetition(const RepetitionGuard& guard, std::vector<bool> begins,
             std::vector<std::string> texts);
  // The one for this model's tokens.
  static Repetition of(const RepetitionGuard& guard, const Model& model);

  // The verdict for the token after `text` (its ids so far, bos and prompt
  // included).
  void look(std::span<const int> text);
  bool banned(int id) const;
  bool penalized(int id) const;
  bool touches(int id) const { return banned(id) || penalized(id); }
  // Whether the verdict changes no logit at all.
  bool empty() const { return banned_.empty() && penalized_.empty(); }
  // Every logit the verdict changes, changed in place ([V]): a banned one
  // to -infinity, a penalized one less the penalty.
  void apply(std::span<float> logits) const;

 private:
  bool begins(int id) const { return begins_.empty() || begins_[static_cast<size_t>(id)]; }
  int spelling(int id) const { return spelling_.empty() ? id : spelling_[static_cast<size_t>(id)]; }
  void ban_repeats(std::span<const int> seen);

  RepetitionGuard guard_;
  std::vector<bool> begins_;
  std::vector<std::string> texts_;
  // A number that pieces of the same text share (the first such piece's
  // id), -1 for those of no text.
  std::vector<int> spelling_;
  // The window's words: the spellings of their pieces (white space left
  // out) back to back, where each starts among them, and a number for each
  // (the same for the same text).
  std::vector<int> keys_;
  std::vector<size_t> starts_;
  std::vector<int> words_;
  // The verdict: the spellings banned (sorted), whether only a piece that
  // begins a word writes them (the text's last word has letters), and the
  // ids penalized (sorted).
  std::vector<int> banned_;
  bool banned_begin_ = true;
  std::vector<int> penalized_;
};

}  // namespace nextword
