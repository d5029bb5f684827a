#include "train/corpus.h"

#include <cmath>
#include <unordered_map>

#include "base/random.h"
#include "model/lexicon.h"

namespace nextword {

Lexicon count_words(const std::vector<Document>& documents, const std::string& unk,
                    const std::string& bos) {
  std::unordered_map<std::string, int64_t> counts;
  for (const Document& document : documents) {
    for (const std::string& word : document) ++counts[word];
  }
  Lexicon lexicon;
  for (auto& [word, count] : counts) {
    if (word != unk && word != bos && is_lexicon_word(word))
      lexicon.entries.push_back({word, count});
  }
  sort_lexicon(lexicon);
  return lexicon;
}

std::vector<std::string> build_vocabulary(const Lexicon& lexicon, int size, const std::string& unk,
                                          const std::string& bos) {
  std::vector<std::string> words{unk};
  if (!bos.empty()) words.push_back(bos);
  for (const LexiconEntry& e : lexicon.entries) {
    if (static_cast<int>(words.size()) >= size) break;
    words.push_back(e.word);
  }
  return words;
}

TokenStream make_token_stream(const std::vector<Document>& documents, const Vocabulary& vocab,
                              int unk_id, int bos_id, double val_fraction) {
  TokenStream s;
  std::vector<int> all;
  for (const Document& document : documents) {
    if (bos_id >= 0) all.push_back(bos_id);
    for (int id : to_ids(document, vocab, unk_id, bos_id)) {
      all.push_back(id);
      s.unknown += id == unk_id;
    }
    s.words += static_cast<int64_t>(document.size());
    ++s.documents;
  }
  const auto val = static_cast<size_t>(std::floor(static_cast<double>(all.size()) * val_fraction));
  s.train.assign(all.begin(), all.end() - static_cast<std::ptrdiff_t>(val));
  s.val.assign(all.end() - static_cast<std::ptrdiff_t>(val), all.end());
  return s;
}

std::vector<size_t> document_starts(const std::vector<int>& stream, int bos_id, int T) {
  std::vector<size_t> starts;
  for (size_t i = 0; i + static_cast<size_t>(T) < stream.size(); ++i) {
    if (stream[i] == bos_id) starts.push_back(i);
  }
  return starts;
}

size_t window_start(uint64_t seed, int step, int index, int batch, std::span<const size_t> starts,
                    size_t size, int T, bool shuffle) {
  const auto t = static_cast<uint64_t>(T);
  if (!shuffle) {
    const uint64_t count = starts.empty() ? size - t : starts.size();  // start + T < size
    const uint64_t pick = random_bits(seed, RandomStream::kWindows, static_cast<uint64_t>(step),
                                      static_cast<uint64_t>(index)) %
                          count;
    return starts.empty() ? pick : starts[pick];
  }
  // Tiles o + kT for every o in [0, T): the last one, (count - 1) T + T - 1,
  // still has T tokens after it.
  const uint64_t count = starts.empty() ? (size - 2 * t) / t + 1 : starts.size();
  const uint64_t window =
      static_cast<uint64_t>(step) * static_cast<uint64_t>(batch) + static_cast<uint64_t>(index);
  const uint64_t epoch = window / count;
  const uint64_t pick =
      permuted(window % count, count, random_bits(seed, RandomStream::kShuffle, epoch, 0));
  if (!starts.empty()) return starts[pick];
  return random_bits(seed, RandomStream::kShuffle, epoch, 1) % t + pick * t;
}

}  // namespace nextword
