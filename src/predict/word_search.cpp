#include "predict/word_search.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <span>

#include "text/subword.h"
#include "text/words.h"

namespace nextword {
namespace {

// A word's first byte: white space or an ASCII punctuation mark.
bool starts_word(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
         (c < 0x80 && std::ispunct(c));
}

struct Partial {
  std::vector<int> ids;
  std::string text;
  double log_p = 0;
};

// A partial word one piece longer, before the beam keeps it: the beam's
// entry it extends and the piece, so that only the kept ones are spelled out.
struct Extension {
  size_t parent;
  int id;
  double log_p;
};

// The partial words one piece longer that the beam keeps: the `beam` best
// seen so far (the more probable, then the earlier parent, then the lower
// piece id), in a heap whose front is the worst kept, so that most
// extensions are turned down by one comparison.
class BestExtensions {
 public:
  explicit BestExtensions(int beam) : beam_(static_cast<size_t>(std::max(beam, 0))) {}
  void clear() { kept_.clear(); }
  // Whether an extension of this probability would be kept (ties to the
  // worst kept are decided in add()).
  bool may_keep(double log_p) const {
    return kept_.size() < beam_ || (!kept_.empty() && log_p >= kept_.front().log_p);
  }
  void add(const Extension& e) {
    if (kept_.size() < beam_) {
      kept_.push_back(e);
      std::push_heap(kept_.begin(), kept_.end(), better);
    } else if (beam_ > 0 && better(e, kept_.front())) {
      std::pop_heap(kept_.begin(), kept_.end(), better);
      kept_.back() = e;
      std::push_heap(kept_.begin(), kept_.end(), better);
    }
  }
  // The kept ones, best first (the heap is spent).
  const std::vector<Extension>& best_first() {
    std::sort_heap(kept_.begin(), kept_.end(), better);
    return kept_;
  }

 private:
  static bool better(const Extension& a, const Extension& b) {
    if (a.log_p != b.log_p) return a.log_p > b.log_p;
    return a.parent != b.parent ? a.parent < b.parent : a.id < b.id;
  }
  size_t beam_;
  std::vector<Extension> kept_;
};

// The extensions the beam kept, spelled out: entry e.parent of `from`
// followed by piece e.id; parents and pieces say the same for the batch.
std::vector<Partial> spell_out(const std::vector<Partial>& from, BestExtensions& longer,
                               const Model& model, std::vector<int>& parents,
                               std::vector<int>& pieces) {
  std::vector<Partial> kept;
  parents.clear();
  pieces.clear();
  for (const Extension& e : longer.best_first()) {
    parents.push_back(static_cast<int>(e.parent));
    pieces.push_back(e.id);
    const Partial& parent = from[e.parent];
    kept.push_back({parent.ids, parent.text + model.subword->text(e.id), e.log_p});
    kept.back().ids.push_back(e.id);
  }
  return kept;
}

// A row's ln sum_j e^logits[j] and the share of its probability on the
// pieces that begin a word (the chance that the word ends there), one
// exponential a piece, in double throughout: the search multiplies many
// probabilities, and layers.h's log_sum_exp takes float exponentials.
struct RowShares {
  double log_normalizer;
  double begins;
};
RowShares row_shares(std::span<const float> logits, const std::vector<bool>& begins) {
  const float most = *std::max_element(logits.begin(), logits.end());
  double sum = 0, begun = 0;
  for (size_t id = 0; id < logits.size(); ++id) {
    const double e = std::exp(static_cast<double>(logits[id]) - most);
    sum += e;
    if (begins[id]) begun += e;
  }
  return {most + std::log(sum), begun / sum};
}

// `word`'s text (its leading space dropped) as ASCII folds it.
std::string folded_word(std::string_view text) {
  if (text.starts_with(' ')) text.remove_prefix(1);
  std::string folded(text);
  for (char& c : folded) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return folded;
}

// Whether a partial word can still grow into a word that starts with the
// folded prefix (one of the two starts the other).
bool can_reach(const std::string& folded, const std::string& prefix) {
  const size_t n = std::min(folded.size(), prefix.size());
  return folded.compare(0, n, prefix, 0, n) == 0;
}

// can_reach(folded + `piece` folded, prefix), without spelling it out: a
// piece after the first never holds the word's leading space.
bool can_reach_with(const std::string& folded, std::string_view piece, const std::string& prefix) {
  for (size_t i = 0; i < piece.size() && folded.size() + i < prefix.size(); ++i) {
    const auto c = static_cast<char>(std::tolower(static_cast<unsigned char>(piece[i])));
    if (c != prefix[folded.size() + i]) return false;
  }
  return true;
}

// A word that is listed: not only white space.
bool listable(const std::string& word) {
  return std::any_of(word.begin(), word.end(),
                     [](char c) { return !std::isspace(static_cast<unsigned char>(c)); });
}

}  // namespace

std::vector<bool> word_beginnings(const Model& model) {
  std::vector<bool> begins(static_cast<size_t>(model.config.vocab_size));
  for (int id = 0; id < model.config.vocab_size; ++id) {
    const std::string text = model.subword->text(id);
    begins[static_cast<size_t>(id)] = model.subword->is_control(id) || text.empty() ||
                                      starts_word(static_cast<unsigned char>(text[0]));
  }
  return begins;
}

std::vector<NextWord> next_words(Predictor& predictor, const Encoded& context, int k,
                                 const WordSearch& search, std::string_view prefix) {
  const Model& model = predictor.model();
  const int V = model.config.vocab_size;
  const std::vector<bool> begins = word_beginnings(model);
  // The context, cut so that the longest word still fits the model's window.
  Encoded path;
  const auto most = static_cast<size_t>(std::max(1, model.config.max_len - search.max_pieces));
  const auto from = context.ids.size() > most ? context.ids.size() - most : 0;
  path.ids.assign(context.ids.begin() + static_cast<long>(from), context.ids.end());
  const size_t base = path.ids.size();
  const std::string typed = folded_word(prefix);

  // Depth 1: the pieces that begin a word (not <unk>, <s> or </s>, whose
  // words are never listed): extensions of an empty partial word, only the
  // kept ones spelled out.
  std::span<const float> logits = predictor.next_logits(path);
  double z = row_shares(logits, begins).log_normalizer;
  BestExtensions longer(search.beam);
  for (int id = 0; id < V; ++id) {
    if (!begins[static_cast<size_t>(id)] || model.subword->is_control(id)) continue;
    const double log_p = logits[static_cast<size_t>(id)] - z;
    if (longer.may_keep(log_p) && can_reach(folded_word(model.subword->text(id)), typed)) {
      longer.add({0, id, log_p});
    }
  }
  // Each depth's partial words side by side: beam entry b is entry
  // parents[b] of the depth before followed by pieces[b] (at the first
  // depth, the context followed by pieces[b]).
  std::vector<int> parents, pieces;
  std::vector<Partial> beam = spell_out({Partial{}}, longer, model, parents, pieces);
  parents.clear();
  const bool side_by_side = search.side_by_side && predictor.start_branches(path);
  std::map<std::string, double> words;  // the word's text (its space kept) -> probability
  for (int depth = 1; depth <= search.max_pieces && !beam.empty(); ++depth) {
    longer.clear();
    const std::span<const float> rows =
        side_by_side ? predictor.grow_branches(parents, pieces) : std::span<const float>();
    for (size_t b = 0; b < beam.size(); ++b) {
      const Partial& p = beam[b];
      if (side_by_side) {
        logits = rows.subspan(b * static_cast<size_t>(V), static_cast<size_t>(V));
      } else {
        path.ids.resize(base);
        path.ids.insert(path.ids.end(), p.ids.begin(), p.ids.end());
        logits = predictor.next_logits(path);
      }
      // The word ends here with the probability that a word begins next.
      const RowShares shares = row_shares(logits, begins);
      z = shares.log_normalizer;
      const std::string folded = folded_word(p.text);
      if (folded.size() >= typed.size()) words[p.text] += std::exp(p.log_p) * shares.begins;
      if (depth == search.max_pieces) continue;
      for (int id = 0; id < V; ++id) {
        if (begins[static_cast<size_t>(id)]) continue;
        const double log_p = p.log_p + (logits[static_cast<size_t>(id)] - z);
        if (!longer.may_keep(log_p)) continue;
        if (folded.size() < typed.size() &&
            !can_reach_with(folded, model.subword->text(id), typed)) {
          continue;
        }
        longer.add({b, id, log_p});
      }
    }
    beam = spell_out(beam, longer, model, parents, pieces);
  }
  std::vector<NextWord> listed;
  for (const auto& [text, probability] : words) {
    if (!listable(text)) continue;
    listed.push_back({text.starts_with(' ') ? text.substr(1) : text, probability});
  }
  // One word may be spelled with and without its space (" time" and a
  // punctuation mark's "time" cannot both begin a word, but a text may
  // differ only there): they are one word.
  std::sort(listed.begin(), listed.end(),
            [](const NextWord& a, const NextWord& b) { return a.word < b.word; });
  std::vector<NextWord> merged;
  for (NextWord& w : listed) {
    if (!merged.empty() && merged.back().word == w.word) {
      merged.back().probability += w.probability;
    } else {
      merged.push_back(std::move(w));
    }
  }
  std::stable_sort(merged.begin(), merged.end(), [](const NextWord& a, const NextWord& b) {
    return a.probability > b.probability;
  });
  if (merged.size() > static_cast<size_t>(k)) merged.resize(static_cast<size_t>(k));
  return merged;
}

std::vector<NextWord> words_after(Predictor& predictor, std::string_view text,
                                  std::string_view prefix) {
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  // A model without a BOS piece has nothing to read before a text's first
  // piece (GPT-2's and Qwen's byte-level BPE): no next word, not an error,
  // so that a stream of texts may hold an empty one.
  if (text.empty() && !predictor.model().config.has_bos()) return {};
  const WordSearch search;
  return next_words(predictor, encode(predictor.model(), text, Unknowns::kAllow),
                    search.beam * search.max_pieces, search, prefix);
}

}  // namespace nextword
