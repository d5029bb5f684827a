// The training text as token ids: the vocabulary built from it, and the
// token stream split into a training and a validation part.
#pragma once

#include <cstdint>
#include <span>
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

// Where window `index` of step `step` starts, for batches of `batch` windows
// of T + 1 tokens in a stream of `size` tokens. `starts`: the places a window
// may start (document_starts), or empty for anywhere. Without `shuffle`,
// each window's start is drawn at random, repeats allowed. With it, the
// windows go through epochs, each a fresh random order of every start once
// (anywhere: the starts o, o + T, o + 2T, ... of windows that tile the
// stream, o drawn again each epoch). Every rank and thread computes the same.
size_t window_start(uint64_t seed, int step, int index, int batch, std::span<const size_t> starts,
                    size_t size, int T, bool shuffle);

TokenStream make_token_stream(const std::vector<Document>& documents, const Vocabulary& vocab,
                              int unk_id, int bos_id, double val_fraction);

}  // namespace nextword
