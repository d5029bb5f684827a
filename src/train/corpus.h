// The training text as token ids: the vocabulary built from it, and the
// token stream split into a training and a validation part.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/lexicon.h"
#include "model/vocabulary.h"
#include "text/documents.h"

namespace nextword {

// Every word of the documents with its count, in the lexicon's order (most
// frequent first, ties in byte order), but `unk` and `bos` and words that are
// not valid UTF-8 (which vocab.json and lexicon.tsv cannot store).
Lexicon count_words(const std::vector<Document>& documents, const std::string& unk,
                    const std::string& bos);

// `unk` and `bos` first (bos omitted when empty), then the lexicon's first
// words, up to `size` entries in all: the most frequent words.
std::vector<std::string> build_vocabulary(const Lexicon& lexicon, int size, const std::string& unk,
                                          const std::string& bos);

struct TokenStream {
  std::vector<int> train;  // every document, each after a bos (when the model has one)
  std::vector<int> val;    // the last val_fraction of the stream
  int64_t documents = 0;
  int64_t words = 0;
  int64_t unknown = 0;  // words that became unk
};

// Where windows of T + 1 tokens may start at a document's start: the
// positions of `bos` in `stream` with T more tokens after them.
std::vector<size_t> document_starts(const std::vector<int>& stream, int bos_id, int T);

TokenStream make_token_stream(const std::vector<Document>& documents, const Vocabulary& vocab,
                              int unk_id, int bos_id, double val_fraction);

}  // namespace nextword
