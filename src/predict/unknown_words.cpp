#include "predict/unknown_words.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace nextword {

double log_add(double a, double b) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  if (b == -kInfinity) return a;
  if (a == -kInfinity) return b;
  const double high = std::max(a, b), low = std::min(a, b);
  return high + std::log1p(std::exp(low - high));
}

UnknownWords::UnknownWords(const Model& model, const Lexicon* lexicon) {
  if (lexicon == nullptr) return;
  for (const LexiconEntry& entry : lexicon->entries) {
    const int id = model.vocab.find(entry.word);
    if ((id >= 0 && !model.is_special(id)) || entry.count < 1) continue;
    counts_.emplace_back(entry.word, entry.count);
    total_ += static_cast<double>(entry.count);
  }
  std::sort(counts_.begin(), counts_.end());
}

double UnknownWords::log_q(std::string_view word) {
  if (spelling_ == nullptr) {
    Spelling::Options options;
    options.order = kOrder;
    spelling_ = std::make_unique<Spelling>(counts_, options);
  }
  const double char_part = spelling_->log_prob(word);
  if (total_ <= 0) return char_part;
  const auto at = std::lower_bound(counts_.begin(), counts_.end(), word,
                                   [](const std::pair<std::string, int64_t>& entry,
                                      std::string_view w) { return entry.first < w; });
  const int64_t count = at != counts_.end() && at->first == word ? at->second : 0;
  const double mixed_char = std::log(1 - kLexiconWeight) + char_part;
  if (count == 0) return mixed_char;
  return log_add(std::log(kLexiconWeight * static_cast<double>(count) / total_), mixed_char);
}

bool spelled_out(const Model& model, const std::string& token, int id) {
  return id == model.unk_id && model.unk_id >= 0 && token != model.config.unk_token;
}

void add_spelling(const Model& model, std::unique_ptr<UnknownWords>& words,
                  std::span<const std::string> tokens, std::span<const int> ids,
                  std::vector<TokenScore>& scores, const Lexicon* lexicon) {
  for (TokenScore& score : scores) {
    const auto at = static_cast<size_t>(score.position);
    if (!spelled_out(model, tokens[at], ids[at])) continue;
    if (words == nullptr && lexicon != nullptr) {
      words = std::make_unique<UnknownWords>(model, lexicon);
    } else if (words == nullptr) {
      // A model made in memory has no files, so no lexicon beside them.
      const std::optional<Lexicon> beside =
          model.paths.vocab.empty() ? std::nullopt : read_lexicon_beside(model.paths.vocab);
      words = std::make_unique<UnknownWords>(model, beside ? &*beside : nullptr);
    }
    score.logprob += words->log_q(tokens[at]);
  }
}

}  // namespace nextword
