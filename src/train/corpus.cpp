#include "train/corpus.h"

#include <cmath>
#include <unordered_map>

#include "text/utf8.h"

namespace nextword {

Lexicon count_words(const std::vector<Document>& documents, const std::string& unk,
                    const std::string& bos) {
  std::unordered_map<std::string, int64_t> counts;
  for (const Document& document : documents) {
    for (const std::string& word : document) ++counts[word];
  }
  Lexicon lexicon;
  for (auto& [word, count] : counts) {
    if (word != unk && word != bos && is_valid_utf8(word)) lexicon.entries.push_back({word, count});
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

}  // namespace nextword
