// The training text as ids (train/corpus.h): the vocabulary, most frequent
// first with ties in byte order after unk and bos; the token stream with a
// bos before each document and the validation part cut from its end.
#include "train/corpus.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "base/random.h"

using namespace nextword;

TEST_CASE("the vocabulary: specials first, then by count, ties in byte order", "[corpus]") {
  // Counts: the 4, cat 2, sat 2, a 2, Zoo 1, dog 1, <bos> 2, <unk> 1, bad UTF-8 5.
  const std::string bad = "\xff\xfe";
  const std::vector<Document> documents{{"the", "cat", "sat", "<bos>", "a", bad, bad},
                                        {"the", "a", "Zoo", "the", bad},
                                        {"dog", "<unk>", "cat", "sat", "the", "<bos>", bad, bad}};
  CHECK(build_vocabulary(count_words(documents, "<unk>", "<bos>"), 100, "<unk>", "<bos>") ==
        std::vector<std::string>{"<unk>", "<bos>", "the", "a", "cat", "sat", "Zoo", "dog"});
  // The size counts the specials; the cut keeps the most frequent.
  CHECK(build_vocabulary(count_words(documents, "<unk>", "<bos>"), 5, "<unk>", "<bos>") ==
        std::vector<std::string>{"<unk>", "<bos>", "the", "a", "cat"});
  CHECK(build_vocabulary(count_words(documents, "<unk>", "<bos>"), 2, "<unk>", "<bos>") ==
        std::vector<std::string>{"<unk>", "<bos>"});
  // Without a bos token "<bos>" is a word like any other (count 2, before "a").
  CHECK(build_vocabulary(count_words(documents, "<unk>", ""), 5, "<unk>", "") ==
        std::vector<std::string>{"<unk>", "the", "<bos>", "a", "cat"});
  CHECK(build_vocabulary(count_words({}, "<unk>", "<bos>"), 10, "<unk>", "<bos>") ==
        std::vector<std::string>{"<unk>", "<bos>"});
}

TEST_CASE("the token stream: bos before each document, validation from the end", "[corpus]") {
  const Vocabulary vocab({"<unk>", "<bos>", "the", "cat", "sat"});
  // "<bos>" written in the text is a word spelled like a special: unknown.
  const std::vector<Document> documents{{"the", "cat", "sat"}, {"the", "dog", "<bos>"}, {"cat"}};
  const TokenStream s = make_token_stream(documents, vocab, 0, 1, 0.25);
  // All: 1 2 3 4 | 1 2 0 0 | 1 3 = 10 tokens; floor(10 * 0.25) = 2 for validation.
  CHECK(s.train == std::vector<int>{1, 2, 3, 4, 1, 2, 0, 0});
  CHECK(s.val == std::vector<int>{1, 3});
  CHECK(s.documents == 3);
  CHECK(s.words == 7);
  CHECK(s.unknown == 2);

  // No bos token: documents back to back; floor(7 * 0.5) = 3.
  const TokenStream plain = make_token_stream(documents, vocab, 0, -1, 0.5);
  CHECK(plain.train == std::vector<int>{2, 3, 4, 2});
  CHECK(plain.val == std::vector<int>{0, 1, 3});
  CHECK(plain.unknown == 1);  // dog; without a bos "<bos>" is the word with id 1
  CHECK(make_token_stream(documents, vocab, 0, 1, 0.0).val.empty());
  CHECK(make_token_stream(documents, vocab, 0, 1, 0.0).train.size() == 10);
}

TEST_CASE("document windows start at each bos with a window's tokens after it", "[corpus]") {
  // bos = 1: documents at 0, 4 and 7; a window of T + 1 = 3 tokens fits after 0 and 4 only.
  const std::vector<int> stream = {1, 5, 6, 7, 1, 8, 9, 1, 5};
  CHECK(document_starts(stream, 1, 2) == std::vector<size_t>{0, 4});
  CHECK(document_starts(stream, 1, 1) == std::vector<size_t>{0, 4, 7});
  CHECK(document_starts(stream, 1, 9).empty());
}

TEST_CASE("a shuffle is a permutation, a fresh one for each key", "[corpus]") {
  for (uint64_t n : {1u, 2u, 3u, 7u, 16u, 17u, 1000u, 11680u}) {
    INFO("n = " << n);
    std::vector<uint64_t> order, other;
    for (uint64_t i = 0; i < n; ++i) {
      order.push_back(permuted(i, n, 11));
      other.push_back(permuted(i, n, 12));
    }
    std::vector<uint64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (uint64_t i = 0; i < n; ++i) CHECK(sorted[i] == i);
    if (n >= 7) CHECK(order != other);
  }
}

TEST_CASE("window starts: drawn at random, or epochs of every start once", "[corpus]") {
  const std::vector<size_t> documents{0, 10, 25, 31, 40, 58, 70};
  const size_t size = 100;
  const int T = 8, batch = 3;
  // Drawn: what the trainer has always drawn, random_bits(seed, kWindows, step, index).
  for (int step = 0; step < 5; ++step) {
    for (int b = 0; b < batch; ++b) {
      const uint64_t bits = random_bits(9, RandomStream::kWindows, static_cast<uint64_t>(step),
                                        static_cast<uint64_t>(b));
      CHECK(window_start(9, step, b, batch, {}, size, T, false) == bits % (size - T));
      CHECK(window_start(9, step, b, batch, documents, size, T, false) ==
            documents[bits % documents.size()]);
    }
  }
  // Shuffled, at document starts: 3 epochs of 7 windows over 7 steps, each
  // epoch every start once, the epochs in different orders.
  std::vector<std::vector<size_t>> epochs(3);
  for (int step = 0; step < 7; ++step) {
    for (int b = 0; b < batch; ++b) {
      epochs[static_cast<size_t>(step * batch + b) / documents.size()].push_back(
          window_start(9, step, b, batch, documents, size, T, true));
    }
  }
  for (const auto& epoch : epochs) {
    std::vector<size_t> sorted = epoch;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == documents);
  }
  CHECK(epochs[0] != epochs[1]);
  CHECK(epochs[1] != epochs[2]);
  // Shuffled, anywhere: (100 - 16) / 8 + 1 = 11 tiles o + 8k a epoch, each
  // with T + 1 tokens in the stream, one offset o per epoch.
  for (int epoch = 0; epoch < 4; ++epoch) {
    std::vector<size_t> starts;
    for (int w = 0; w < 11; ++w) {
      const int window = epoch * 11 + w;
      starts.push_back(window_start(9, window / batch, window % batch, batch, {}, size, T, true));
    }
    std::sort(starts.begin(), starts.end());
    const size_t o = starts[0];
    CHECK(o < static_cast<size_t>(T));
    for (size_t k = 0; k < starts.size(); ++k) CHECK(starts[k] == o + k * T);
    CHECK(starts.back() + T < size);
  }
}
