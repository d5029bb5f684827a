// model/lexicon_index.h: the words a completer offers beyond the vocabulary,
// worked by hand on the fruit model; lexicon.bin mapped only when it is
// made from the lexicon.tsv beside it for this vocabulary; a broken file
// refused naming the file and field.
#include "model/lexicon_index.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>

#include "temp_dir.h"
#include "test_models.h"
#include "text/words.h"

using namespace nextword;
using nextword::testing::fruit;
using nextword::testing::model_error_of;
using nextword::testing::TempDir;

namespace {

// The fruit vocabulary is <unk>, apple, banana, phone, pie, store.
const char* const kTsv = "apple\t10\nPear\t6\npear\t5\nStore\t4\n!\t3\npeach\t2\nZed\t1\n";

std::vector<std::string> ranks_fitting(const LexiconIndex& index, std::string_view prefix) {
  std::vector<std::string> words;
  const auto [first, last] = index.fitting(prefix);
  for (size_t j = first; j < last; ++j) {
    words.emplace_back(index.at(index.rank_by_key(j)).word);
  }
  return words;
}

}  // namespace

TEST_CASE("the index offers the lexicon's words outside the vocabulary, each key once",
          "[lexicon]") {
  const LexiconIndex index =
      LexiconIndex::build(parse_lexicon("x", kTsv), LexiconIndexSource::of(fruit()));
  // apple is a vocabulary word (not counted); Pear, pear, Store, !, peach
  // and Zed are outside it: 6 + 5 + 4 + 3 + 2 + 1. Offered: Pear (pear's
  // key is taken by it), peach, Zed; not Store (the vocabulary's store) nor !.
  CHECK(index.oov_count() == 21);
  REQUIRE(index.size() == 3);
  CHECK(index.at(0).word == "Pear");
  CHECK(index.at(0).key == "pear");
  CHECK(index.at(0).count == 6);
  CHECK(index.at(1).word == "peach");
  CHECK(index.at(2).key == "zed");
  CHECK(ranks_fitting(index, "pe") == std::vector<std::string>{"peach", "Pear"});
  CHECK(ranks_fitting(index, "") == std::vector<std::string>{"peach", "Pear", "Zed"});
  CHECK(ranks_fitting(index, "q").empty());
  CHECK(index.find("pear") == std::optional<size_t>(0));
  CHECK(index.find("pe") == std::nullopt);
  CHECK(index.find("store") == std::nullopt);
  // The vocabulary's words but <unk>, in id order, and by key.
  REQUIRE(index.vocabulary_size() == 5);
  for (size_t j = 0; j < 5; ++j) {
    CHECK(index.vocabulary_word(j).id == static_cast<int>(j) + 1);
    CHECK(index.vocabulary_word(j).key == fruit().vocab.word(static_cast<int>(j) + 1));
    CHECK(index.vocabulary_by_key(j) == j);
  }
  CHECK_FALSE(index.mapped());
}

TEST_CASE("the index of a random lexicon holds what the rules say, in key order", "[lexicon]") {
  // An independent reading of the rules on a lexicon of random words: the
  // offered words and oov_count, then the by-key order against std::set.
  std::mt19937 random(7);
  const std::vector<std::string> letters{"a", "A", "b", "B", "\xC3\xA9", "\xC3\x89", "!"};
  Lexicon lexicon;
  std::set<std::string> seen;
  for (int i = 0; i < 400; ++i) {
    std::string word;
    const int length = 1 + static_cast<int>(random() % 4);
    for (int k = 0; k < length; ++k) word += letters[random() % letters.size()];
    if (seen.insert(word).second) {
      lexicon.entries.push_back({word, 1 + static_cast<int64_t>(random() % 9)});
    }
  }
  lexicon.entries.push_back({"banana", 3});
  sort_lexicon(lexicon);
  const LexiconIndex index = LexiconIndex::build(lexicon, LexiconIndexSource::of(fruit()));
  std::set<std::string> keys{"apple", "banana", "phone", "pie", "store"};
  std::vector<LexiconEntry> offered;
  double oov_count = 0;
  for (const LexiconEntry& e : lexicon.entries) {
    if (fruit().vocab.find(e.word) >= 0) continue;
    oov_count += static_cast<double>(e.count);
    if (has_letter_or_digit(e.word) && keys.insert(fold_case(e.word)).second) offered.push_back(e);
  }
  CHECK(index.oov_count() == oov_count);
  REQUIRE(index.size() == offered.size());
  std::set<std::string> offered_keys;
  for (size_t r = 0; r < offered.size(); ++r) {
    CHECK(index.at(r).word == offered[r].word);
    CHECK(index.at(r).count == offered[r].count);
    CHECK(index.at(r).key == fold_case(offered[r].word));
    offered_keys.insert(fold_case(offered[r].word));
    CHECK(index.find(fold_case(offered[r].word)) == std::optional<size_t>(r));
  }
  size_t j = 0;
  for (const std::string& key : offered_keys) CHECK(index.at(index.rank_by_key(j++)).key == key);
}

TEST_CASE("lexicon.bin is read only when made from the lexicon.tsv beside it", "[lexicon]") {
  TempDir d;
  const std::string vocab = (d.dir / "vocab.json").string();
  const std::string tsv = d.write("lexicon.tsv", kTsv);
  LexiconIndexSource source = LexiconIndexSource::of(fruit());
  CHECK_FALSE(LexiconIndex::beside(vocab, source)->mapped());  // no index: built from the .tsv
  LexiconIndexSource of_tsv = source;
  of_tsv.lexicon_bytes = std::strlen(kTsv);
  const std::string bin =
      d.write("lexicon.bin", LexiconIndex::bytes_of(parse_lexicon("x", kTsv), of_tsv));
  std::optional<LexiconIndex> index = LexiconIndex::beside(vocab, source);
  REQUIRE(index);
  CHECK(index->mapped());
  CHECK(index->size() == 3);
  CHECK(index->at(2).word == "Zed");

  // The .tsv edited after: another size, or the same size but newer.
  d.write("lexicon.tsv", std::string(kTsv) + "Yak\t1\n");
  CHECK_FALSE(LexiconIndex::beside(vocab, source)->mapped());
  CHECK(LexiconIndex::beside(vocab, source)->size() == 4);
  d.write("lexicon.tsv", std::string(kTsv).replace(0, 5, "aloes"));
  std::filesystem::last_write_time(tsv,
                                   std::filesystem::last_write_time(bin) + std::chrono::seconds(2));
  index = LexiconIndex::beside(vocab, source);
  CHECK_FALSE(index->mapped());
  CHECK(index->at(0).word == "aloes");
  // Made for another vocabulary: its ids and keys would be another's.
  d.write("lexicon.tsv", kTsv);
  std::filesystem::last_write_time(bin,
                                   std::filesystem::last_write_time(tsv) + std::chrono::seconds(2));
  CHECK(LexiconIndex::beside(vocab, source)->mapped());
  const Vocabulary other = Vocabulary::from_words({"<unk>", "apple"}, "v");
  LexiconIndexSource another = source;
  another.vocab = &other;
  CHECK_FALSE(LexiconIndex::beside(vocab, another)->mapped());
  CHECK(LexiconIndex::open(bin, another) == std::nullopt);
}

TEST_CASE("a broken lexicon.bin is refused naming the file and field", "[lexicon]") {
  TempDir d;
  LexiconIndexSource source = LexiconIndexSource::of(fruit());
  const std::string good = LexiconIndex::bytes_of(parse_lexicon("x", kTsv), source);
  auto open = [&](const std::string& bytes) {
    const std::string path = d.write("lexicon.bin", bytes);
    return LexiconIndex::open(path, source);
  };
  const std::string path = (d.dir / "lexicon.bin").string();
  CHECK(model_error_of([&] { open("NWLEX"); }) ==
        path + ": magic: not a lexicon index (expected \"NWLEXIDX\")");
  std::string version = good;
  version[8] = 2;
  CHECK(model_error_of([&] { open(version); }) == path + ": version: 2 is not 1");
  CHECK(model_error_of([&] { open(good.substr(0, good.size() - 1)); }) ==
        path + ": n: the header's word count and string bytes do not add up to the file's size");
  // The first record's word placed past the strings: found when it is read.
  std::string outside = good;
  const uint32_t far = 1u << 30;
  std::memcpy(outside.data() + 96 + 8, &far, sizeof far);
  const std::optional<LexiconIndex> index = open(outside);
  REQUIRE(index);
  CHECK(model_error_of([&] { index->at(0); }) == path + ": words[0]: outside the file");
  CHECK(model_error_of([&] { index->at(3); }) == path + ": words[3]: no such word");
  CHECK(index->at(1).word == "peach");
}
