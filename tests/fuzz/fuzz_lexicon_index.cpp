// libFuzzer: any bytes as lexicon.bin (for the fruit model's vocabulary)
// are refused with a model error naming lexicon.bin, or read: then every
// word, key and search answers or throws such an error, never reads outside
// the bytes; and an index written from a lexicon finds each of its keys.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "model/lexicon_index.h"
#include "model/model_file.h"

namespace {

const nextword::Model& fruit() {
  static const nextword::Model model =
      nextword::load_model(nextword::ModelPaths::in_directory(NEXTWORD_FRUIT_DIR));
  return model;
}

bool ours(const nextword::Error& e) {
  return e.code() == nextword::ExitCode::kModel && e.message().rfind("lexicon.bin: ", 0) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nextword::LexiconIndexSource source = nextword::LexiconIndexSource::of(fruit());
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const std::optional<nextword::LexiconIndex> index =
        nextword::LexiconIndex::from_bytes("lexicon.bin", bytes, source);
    if (!index) return 0;
    for (size_t j = 0; j < index->size() && j < 64; ++j) {
      try {
        const nextword::LexiconIndex::Word w = index->at(index->rank_by_key(j));
        (void)index->find(w.key);
        (void)index->fitting(w.key.substr(0, 1));
      } catch (const nextword::Error& e) {
        if (!ours(e)) __builtin_trap();
      }
    }
    for (size_t j = 0; j < index->vocabulary_size() && j < 64; ++j) {
      try {
        (void)index->vocabulary_word(index->vocabulary_by_key(j));
      } catch (const nextword::Error& e) {
        if (!ours(e)) __builtin_trap();
      }
    }
  } catch (const nextword::Error& e) {
    if (!ours(e)) __builtin_trap();
  }
  // The same bytes as lexicon.tsv: its index, written and read back.
  try {
    const nextword::Lexicon lexicon = nextword::parse_lexicon("lexicon.tsv", bytes);
    const std::optional<nextword::LexiconIndex> index = nextword::LexiconIndex::from_bytes(
        "lexicon.bin", nextword::LexiconIndex::bytes_of(lexicon, source), source);
    if (!index) __builtin_trap();
    for (size_t r = 0; r < index->size(); ++r) {
      if (index->find(index->at(r).key) != r) __builtin_trap();
    }
  } catch (const nextword::Error& e) {
    if (e.code() != nextword::ExitCode::kModel) __builtin_trap();
  }
  return 0;
}
