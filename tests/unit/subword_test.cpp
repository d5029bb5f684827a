// text/subword.h: tokenizer.bin's layout and its refusals, encoding and
// decoding worked by hand on a small tokenizer, and llama2.c's own
// tokenizer of stories260K against run.c's encoding written out here as
// run.c does it (a scan of every pair at each merge).
#include "text/subword.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include "base/error.h"
#include "binary_files.h"

using namespace nextword;
using testing::model_error_of;
using testing::put_float;
using testing::put_int;
using testing::read_file;

namespace {

// A tokenizer.bin of llama2.c's shape: <unk>, <s>, </s>, the 256 byte
// pieces, then `more` (piece, score).
std::string tokenizer_bin(const std::vector<std::pair<std::string, float>>& more) {
  std::vector<std::pair<std::string, float>> all = {{"<unk>", 0}, {"\n<s>\n", 0}, {"\n</s>\n", 0}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    all.emplace_back(name, 0);
  }
  all.insert(all.end(), more.begin(), more.end());
  std::string out;
  put_int(out, 8);
  for (const auto& [piece, score] : all) {
    put_float(out, score);
    put_int(out, static_cast<int32_t>(piece.size()));
    out += piece;
  }
  return out;
}

// Ids 259 ...
const std::vector<std::pair<std::string, float>> kSmall = {
    {" ", -1}, {"a", -2}, {"b", -3}, {"ab", -4}, {" ab", -5}, {"ba", -4}, {"\xC3\xA9", -6}};
constexpr int kSpace = 259, kA = 260, kB = 261, kAB = 262, kSpaceAB = 263, kBA = 264, kE = 265;

SubwordTokenizer small() {
  const std::string bin = tokenizer_bin(kSmall);
  return SubwordTokenizer(read_tokenizer_bin(bin, 266, "small.bin"), "small.bin");
}

// run.c's encode (llama2.c), without <s> and </s>: every pair scanned at
// each merge, the first of the best kept; a byte without a piece is id
// byte + 3.
std::vector<int> run_c_encode(const SubwordTokenizer& t, const SubwordPieces& p,
                              std::string_view text) {
  std::vector<int> tokens;
  if (!text.empty()) tokens.push_back(t.find(" "));
  std::string buffer;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) buffer.clear();
    buffer += text[i];
    if (i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80 &&
        buffer.size() < 4) {
      continue;
    }
    if (const int id = t.find(buffer); id != -1) {
      tokens.push_back(id);
    } else {
      for (const char c : buffer) tokens.push_back(static_cast<unsigned char>(c) + 3);
    }
    buffer.clear();
  }
  while (true) {
    float best_score = -1e10f;
    int best_id = -1, best_index = -1;
    for (size_t i = 0; i + 1 < tokens.size(); ++i) {
      const int id = t.find(t.piece(tokens[i]) + t.piece(tokens[i + 1]));
      if (id != -1 && p.scores[static_cast<size_t>(id)] > best_score) {
        best_score = p.scores[static_cast<size_t>(id)];
        best_id = id;
        best_index = static_cast<int>(i);
      }
    }
    if (best_index == -1) break;
    tokens[static_cast<size_t>(best_index)] = best_id;
    tokens.erase(tokens.begin() + best_index + 1);
  }
  return tokens;
}

}  // namespace

TEST_CASE("tokenizer.bin: pieces and scores as written", "[subword]") {
  const std::string bin = tokenizer_bin(kSmall);
  const SubwordPieces p = read_tokenizer_bin(bin, 266, "small.bin");
  CHECK(p.max_piece_length == 8);
  REQUIRE(p.pieces.size() == 266);
  CHECK(p.pieces[1] == "\n<s>\n");
  CHECK(p.pieces[3 + 0x41] == "<0x41>");
  CHECK(p.pieces[kAB] == "ab");
  CHECK(p.pieces[kSpaceAB] == " ab");
  CHECK(p.scores[kBA] == -4.0f);
}

TEST_CASE("tokenizer.bin: a file cut anywhere, padded or lying is refused by name", "[subword]") {
  const std::string bin = tokenizer_bin(kSmall);
  for (size_t cut = 0; cut < bin.size(); ++cut) {
    CAPTURE(cut);
    const std::string m = model_error_of(
        [&] { read_tokenizer_bin(std::string_view(bin).substr(0, cut), 266, "t.bin"); });
    CHECK(m.starts_with("t.bin: "));
    CHECK(m.find("the file ends at byte " + std::to_string(cut)) != std::string::npos);
  }
  CHECK(model_error_of([&] { read_tokenizer_bin(bin + "x", 266, "t.bin"); }) ==
        "t.bin: 1 bytes after the last of 266 pieces (the checkpoint's vocab_size)");
  // A vocabulary larger than the file: it ends early; smaller: bytes after.
  CHECK(model_error_of([&] {
          read_tokenizer_bin(bin, 267, "t.bin");
        }).starts_with("t.bin: piece 266: "));
  CHECK(model_error_of([&] { read_tokenizer_bin(bin, 265, "t.bin"); }).find("bytes after") !=
        std::string::npos);
  CHECK(model_error_of([&] { read_tokenizer_bin(bin, 0, "t.bin"); }) ==
        "t.bin: vocab_size: must be positive, not 0");
  std::string bad = bin;
  put_int(bad, 0);
  bad.replace(0, 4, bad.substr(bad.size() - 4));
  bad.resize(bin.size());
  CHECK(model_error_of([&] { read_tokenizer_bin(bad, 266, "t.bin"); }) ==
        "t.bin: max_piece_length: must be 1 to 65536, not 0");
  // Piece 0's length (bytes 8..12) negative, then longer than the longest.
  for (const int32_t length : {-1, 0, 9}) {
    std::string lying = bin;
    std::memcpy(lying.data() + 8, &length, 4);
    CHECK(model_error_of([&] { read_tokenizer_bin(lying, 266, "t.bin"); }) ==
          "t.bin: piece 0: length must be 1 to max_piece_length 8, not " + std::to_string(length));
  }
  std::string nan = bin;
  const float not_a_number = std::nanf("");
  std::memcpy(nan.data() + 4, &not_a_number, 4);
  CHECK(model_error_of([&] { read_tokenizer_bin(nan, 266, "t.bin"); }) ==
        "t.bin: piece 0: score is not finite");
  // No space piece, or a byte piece missing.
  const std::string no_space = tokenizer_bin({{"a", -1}});
  CHECK(model_error_of([&] {
          SubwordTokenizer(read_tokenizer_bin(no_space, 260, "t.bin"), "t.bin");
        }) == "t.bin: no piece \" \" (the dummy prefix)");
  std::string no_byte = tokenizer_bin(kSmall);
  const size_t at = no_byte.find("<0x7F>");
  no_byte.replace(at, 6, "<0x7f>");  // lower case: not sentencepiece's byte piece
  CHECK(model_error_of([&] {
          SubwordTokenizer(read_tokenizer_bin(no_byte, 266, "t.bin"), "t.bin");
        }) == "t.bin: no byte piece <0x7F>");
}

TEST_CASE("encode: the dummy prefix, characters or their bytes, the best merge first",
          "[subword]") {
  const SubwordTokenizer t = small();
  CHECK(t.encode("").empty());
  // " " "a" "b": only "ab" (-4) is a piece; then " " "ab" make " ab" (-5).
  CHECK(t.encode("ab") == std::vector<int>{kSpaceAB});
  // "ab" and "ba" score alike: the leftmost merges, then " ab" beats nothing.
  CHECK(t.encode("aba") == std::vector<int>{kSpaceAB, kA});
  CHECK(t.encode("bab") == std::vector<int>{kSpace, kBA, kB});
  // A character with a piece; a lone lead byte and a character without one
  // as their bytes' pieces.
  CHECK(t.encode("\xC3\xA9") == std::vector<int>{kSpace, kE});
  CHECK(t.encode("\xC3") == std::vector<int>{kSpace, 3 + 0xC3});
  CHECK(t.encode("x\xE2\x80\x99") ==
        std::vector<int>{kSpace, 3 + 'x', 3 + 0xE2, 3 + 0x80, 3 + 0x99});
  CHECK(t.encode("a a") == std::vector<int>{kSpace, kA, kSpace, kA});  // " a" is no piece
}

TEST_CASE("decode: the space after <s> dropped, byte pieces as bytes", "[subword]") {
  const SubwordTokenizer t = small();
  CHECK(t.decode(SubwordTokenizer::kBos, kSpaceAB) == "ab");
  CHECK(t.decode(kA, kSpaceAB) == " ab");
  CHECK(t.decode(kA, 3 + 0x41) == "A");
  CHECK(t.decode(kA, 3 + 0xFF) == std::string(1, '\xFF'));
  CHECK(t.byte_of(3 + 0x0A) == 0x0A);
  CHECK(t.byte_of(kA) == -1);
}

TEST_CASE("stories260K's tokenizer encodes as run.c does", "[subword][shared]") {
  const std::string path = std::string(NEXTWORD_SHARED_MODELS_DIR) + "/stories260K/tok512.bin";
  const SubwordPieces pieces = read_tokenizer_bin(read_file(path), 512, path);
  const SubwordTokenizer t(pieces, path);
  for (int b = 0; b < 256; ++b) CHECK(t.byte_of(3 + b) == b);  // what run.c assumes
  const std::string golden = read_file(std::string(NEXTWORD_SHARED_MODELS_DIR) +
                                       "/stories260K/greedy-once-upon-a-time.txt");
  CHECK(t.encode(golden) == run_c_encode(t, pieces, golden));
  // Decoding the ids gives the text back (after <s>: without the dummy prefix).
  std::string back;
  int previous = SubwordTokenizer::kBos;
  for (const int id : t.encode(golden)) {
    back += t.decode(previous, id);
    previous = id;
  }
  CHECK(back == golden);
  // Random text: words, spaces, marks, line ends, UTF-8 and bytes that are not.
  const std::vector<std::string> parts = {
      "the",  "a",    " ",  "  ",   ".",        ",", "\n",
      "Lily", "once", "\"", "ball", "\xC3\xA9", "’", "\xF0\x9F\x98\x80",
      "\xFF", "\x80", "zq", "ing",  "  \n"};
  std::mt19937 rng(36);
  for (int i = 0; i < 400; ++i) {
    std::string text;
    const int n = static_cast<int>(rng() % 40);
    for (int j = 0; j < n; ++j) text += parts[rng() % parts.size()];
    CAPTURE(text);
    CHECK(t.encode(text) == run_c_encode(t, pieces, text));
  }
}
