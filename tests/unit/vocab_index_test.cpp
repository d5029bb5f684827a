// model/vocab_index.h: vocab.bin holds the vocabulary's words and table as
// Vocabulary builds them (word_hash worked by hand in Python); it is read in
// vocab.json's place only while fresh; a broken file is refused naming the
// file and the field.
#include "model/vocab_index.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>

#include "model/memory_file.h"
#include "model/model_file.h"
#include "temp_dir.h"

using namespace nextword;
using nextword::testing::model_error_of;
using nextword::testing::TempDir;

namespace {

// Random words of 0 to 19 bytes, some of them two-byte characters, all
// different.
std::vector<std::string> random_words(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> words;
  std::set<std::string> seen;
  while (words.size() < n) {
    std::string w;
    const size_t length = rng() % 20;
    while (w.size() < length) w += rng() % 8 == 0 ? "\u00e9" : std::string(1, 'a' + rng() % 26);
    if (seen.insert(w).second) words.push_back(w);
  }
  return words;
}

}  // namespace

TEST_CASE("word_hash: worked values (8 bytes a step, then splitmix64's finalizer)", "[vocab]") {
  // Computed by an independent Python implementation of data/FORMAT.md's
  // description.
  CHECK(word_hash("") == 0x08035f29acc108b3ULL);
  CHECK(word_hash("apple") == 0x9eec149e974fbf9fULL);
  CHECK(word_hash("Second World") == 0xe597538cb9410749ULL);
  CHECK(word_hash("na\u00efve caf\u00e9") == 0x2071e59e74e8cf4eULL);
}

TEST_CASE("vocab.bin gives back the words and finds each of them", "[vocab]") {
  for (const size_t n : {1, 2, 3, 1000, 5000}) {
    INFO(n);
    const std::vector<std::string> words = random_words(n, n);
    const Vocabulary vocab(words);
    const std::string bytes = vocab_index_bytes(vocab, 1234);
    // 64-byte header, an end per word, a slot of 4 bytes per slot, the words.
    CHECK(bytes.size() == 64 + 4 * n + 4 * vocab.table().size() + vocab.chars().size());
    CHECK(vocab.table().size() >= 2 * n);
    const std::optional<Vocabulary> read = vocab_index_from_bytes("v.bin", bytes, 1234);
    REQUIRE(read);
    CHECK(read->words() == words);
    for (size_t id = 0; id < n; ++id) CHECK(read->find(words[id]) == static_cast<int>(id));
    CHECK(read->find("absent word") == -1);
    CHECK(read->find("\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9x") == -1);
    // Made from a vocab.json of another size: not this one's.
    CHECK_FALSE(vocab_index_from_bytes("v.bin", bytes, 1235));
  }
}

TEST_CASE("a broken vocab.bin is refused naming the file and field", "[vocab]") {
  const Vocabulary vocab(std::vector<std::string>{"<unk>", "apple", "caf\u00e9", "pie"});
  const std::string good = vocab_index_bytes(vocab, 40);
  const auto error = [](std::string bytes) {
    return model_error_of([&] { vocab_index_from_bytes("v.bin", std::move(bytes), 40); });
  };
  const auto with = [&](size_t at, auto value) {
    std::string bytes = good;
    std::memcpy(bytes.data() + at, &value, sizeof value);
    return bytes;
  };
  CHECK(error("NWVOC") == "v.bin: magic: not a vocabulary index (expected \"NWVOCIDX\")");
  CHECK(error(with(8, uint32_t{2})) == "v.bin: version: 2 is not 1");
  CHECK(error(with(12, uint32_t{0})) == "v.bin: words: the vocabulary is empty");
  CHECK(error(with(32, uint64_t{4})) ==
        "v.bin: slots: 4 is not a power of two at least twice the 4 words within the file");
  CHECK(error(with(32, uint64_t{12})).find("v.bin: slots: 12 is not") == 0);
  CHECK(error(good + "x") ==
        "v.bin: chars_bytes: the header's words, slots and bytes do not add up to the file's "
        "size");
  // Words: apple ends at 10; pie at 18 (the last).
  CHECK(error(with(64 + 4, uint32_t{4})) == "v.bin: ends: do not rise to the characters' end");
  CHECK(error(with(64 + 12, uint32_t{17})) == "v.bin: ends: do not rise to the characters' end");
  // café's é is bytes 13 and 14 of the characters: a word ending at 14.
  CHECK(error(with(64 + 8, uint32_t{14})) == "v.bin: chars: not UTF-8 words");
  const size_t slots_at = 64 + 4 * 4;
  CHECK(error(with(slots_at, int32_t{4})) ==
        "v.bin: slots: hold an id out of range, or no free slot");
  CHECK(error(with(slots_at, int32_t{-2})) ==
        "v.bin: slots: hold an id out of range, or no free slot");
  std::string no_free = good;
  for (size_t s = 0; s < vocab.table().size(); ++s) {
    std::memcpy(no_free.data() + slots_at + 4 * s, &s, 4);
    if (s >= 3) std::memcpy(no_free.data() + slots_at + 4 * s, "\0\0\0\0", 4);
  }
  CHECK(error(no_free) == "v.bin: slots: hold an id out of range, or no free slot");
}

TEST_CASE("vocab.bin is read in vocab.json's place only while fresh", "[vocab]") {
  TempDir d;
  const std::string json = d.write("vocab.json", R"(["<unk>","apple","pie"])");
  CHECK_FALSE(fresh_vocab_index(json));  // no vocab.bin
  // The same size as vocab.json's words, other words: which one is read shows.
  const Vocabulary other(std::vector<std::string>{"<unk>", "appla", "pie"});
  const std::string bin = d.write("vocab.bin", vocab_index_bytes(other, 23));
  std::filesystem::last_write_time(
      bin, std::filesystem::last_write_time(json) + std::chrono::seconds(1));
  std::optional<IndexedVocabulary> read = fresh_vocab_index(json);
  REQUIRE(read);
  CHECK(read->json_bytes == 23);
  CHECK(read->vocab.word(1) == "appla");
  // Older than vocab.json, or made from one of another size: not read.
  std::filesystem::last_write_time(
      bin, std::filesystem::last_write_time(json) - std::chrono::seconds(1));
  CHECK_FALSE(fresh_vocab_index(json));
  d.write("vocab.json", R"(["<unk>","apple","pies"])");
  std::filesystem::last_write_time(
      bin, std::filesystem::last_write_time(json) + std::chrono::seconds(1));
  CHECK_FALSE(fresh_vocab_index(json));
}

TEST_CASE("memory_vocab_hash: the words and newlines hashed 8 bytes a step, any length",
          "[vocab][memory]") {
  // Longer than the hash's 64 KiB buffer; against the text built whole.
  for (const size_t n : {1, 7, 20000}) {
    const std::vector<std::string> words = random_words(n, 7 + n);
    std::string text;
    for (const std::string& w : words) text += w + "\n";
    text.resize((text.size() + 7) / 8 * 8, '\0');
    uint64_t hash = 14695981039346656037ull;
    for (size_t at = 0; at < text.size(); at += 8) {
      uint64_t word = 0;
      for (size_t k = 0; k < 8; ++k)
        word |= uint64_t{static_cast<unsigned char>(text[at + k])} << (8 * k);
      hash = (hash ^ word) * 1099511628211ull;
    }
    INFO(n << " words, " << text.size() << " bytes");
    CHECK(memory_vocab_hash(Vocabulary(words)) == hash);
  }
}
