// The lexicon as completion reads it: the words of lexicon.tsv that a
// completer offers beyond a model's vocabulary, with their counts, most
// frequent first, and an index by folded key for prefix search; and the
// vocabulary's words with their keys in the same way
// (lexicon.bin beside lexicon.tsv; data/FORMAT.md, "The lexicon index").
//
// Written once (at build and install time for the shipped models, by
// `train`, or by `nextword lexicon`) and memory-mapped at load: `complete`,
// `type` and `lsp` touch the pages a prefix needs instead of parsing and
// hashing 854,454 lines at every start. Built in memory from a Lexicon the
// same bytes serve a lexicon given by --lexicon or one without its index.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "model/lexicon.h"
#include "model/vocabulary.h"

namespace nextword {

class FileBytes;
struct Model;

// What the index is made for: a vocabulary (its words' hash) and its special
// ids, which the offered words leave out, and the size of the lexicon.tsv it
// was made from (0 when it came from elsewhere).
struct LexiconIndexSource {
  const Vocabulary* vocab = nullptr;
  int unk_id = -1;
  int bos_id = -1;
  uint64_t lexicon_bytes = 0;

  static LexiconIndexSource of(const Model& model);
};

class LexiconIndex {
 public:
  struct Word {
    std::string_view word;  // as the lexicon spells it
    std::string_view key;   // folded (text/words.h)
    int64_t count = 0;
  };

  // lexicon.bin's bytes for `lexicon`: its words outside the vocabulary
  // that hold a letter or digit, each key once (the vocabulary's keys and
  // the more frequent spelling win), in the lexicon's order.
  static std::string bytes_of(const Lexicon& lexicon, const LexiconIndexSource& source);
  // The index of `lexicon`, in memory.
  static LexiconIndex build(const Lexicon& lexicon, const LexiconIndexSource& source);
  // Maps lexicon.bin at `path`. Throws model_error naming the file and the
  // field that breaks the format; nullopt when it was made for another
  // vocabulary or, with source.lexicon_bytes > 0, another lexicon.tsv.
  static std::optional<LexiconIndex> open(const std::string& path,
                                          const LexiconIndexSource& source);
  // lexicon.bin's bytes already in memory, named `path` in messages (tests
  // and fuzzers): open's checks and answers.
  static std::optional<LexiconIndex> from_bytes(const std::string& path, std::string bytes,
                                                const LexiconIndexSource& source);
  // The index for a model directory's vocab.json: lexicon.bin when it is
  // there and made from the lexicon.tsv beside it (not older than it, of
  // its size) for this vocabulary, else built from lexicon.tsv; nullopt
  // when there is neither.
  static std::optional<LexiconIndex> beside(const std::string& vocab_path,
                                            const LexiconIndexSource& source);

  // Words offered, and the summed count of every lexicon word outside the
  // vocabulary (offered or not): p_model(w) = p(unk) count(w) / oov_count.
  size_t size() const { return n_; }
  double oov_count() const { return oov_count_; }
  // The word of rank `rank` (0: the most frequent).
  Word at(size_t rank) const;
  // The ranks whose keys start with `prefix_key` are rank_by_key(j) for j
  // in [first, last), in the order of their keys.
  std::pair<size_t, size_t> fitting(std::string_view prefix_key) const;
  size_t rank_by_key(size_t j) const;
  // The rank of the word of key `key`, if one.
  std::optional<size_t> find(std::string_view key) const;

  // The vocabulary's words a completer offers (all but the special ones and
  // those without a letter or digit), in id order, with their keys; and
  // their numbers j in the order of the keys.
  struct VocabularyWord {
    int id;
    std::string_view key;
  };
  size_t vocabulary_size() const { return m_; }
  VocabularyWord vocabulary_word(size_t j) const;
  size_t vocabulary_by_key(size_t j) const;
  bool mapped() const;

 private:
  explicit LexiconIndex(std::shared_ptr<const FileBytes> file);
  std::string_view key_by_key(size_t j) const;

  std::shared_ptr<const FileBytes> file_;
  size_t n_ = 0, m_ = 0;
  uint32_t vocab_size_ = 0;
  double oov_count_ = 0;
  const char* records_ = nullptr;
  const char* by_key_ = nullptr;
  const char* vocabulary_ = nullptr;
  const char* vocabulary_by_key_ = nullptr;
  std::string_view strings_;
};

// FNV-1a (64 bits) of the vocabulary's words in id order, each followed by
// a zero byte: what lexicon.bin records of the vocabulary it was made for.
uint64_t vocabulary_hash(const Vocabulary& vocab);

}  // namespace nextword
