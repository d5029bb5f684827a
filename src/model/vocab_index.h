// vocab.bin: a model's vocabulary ready to map, written beside vocab.json
// (data/FORMAT.md, "vocab.bin") so that a process reads no JSON and builds
// no table to know its words: the words end to end, where each ends, and
// the open-addressing table of word_hash that Vocabulary::find probes.
//
// Made by `nextword lexicon` (at build and install time for the shipped
// models) and read only while fresh: not older than the vocab.json beside
// it and made from one of its size. vocab.json stays the format's source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/vocabulary.h"

namespace nextword {

// vocab.bin's bytes for `vocab`, made from a vocab.json of `json_bytes` bytes.
std::string vocab_index_bytes(const Vocabulary& vocab, uint64_t json_bytes);

// The vocabulary of the vocab.bin at `path`, mapped; nullopt when it was made
// from a vocab.json of another size than `json_bytes`. Throws model_error
// naming the file and the field that breaks the format.
std::optional<Vocabulary> read_vocab_index(const std::string& path, uint64_t json_bytes);
// The same for bytes already in memory, named `path` in messages (tests and
// fuzzers).
std::optional<Vocabulary> vocab_index_from_bytes(const std::string& path, std::string bytes,
                                                 uint64_t json_bytes);

// The vocabulary of the model whose vocab.json is `vocab_json`, from the
// vocab.bin beside it when that is fresh, with vocab.json's size.
struct IndexedVocabulary {
  Vocabulary vocab;
  uint64_t json_bytes = 0;
};
std::optional<IndexedVocabulary> fresh_vocab_index(const std::string& vocab_json);

}  // namespace nextword
