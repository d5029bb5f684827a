// text/byte_bpe.h: GPT-2's byte stand-ins, merges by rank worked by hand on
// a small vocabulary, user-defined and control tokens, text that is not
// UTF-8, the errors naming the field at fault; and llama.cpp's tokenizer
// test strings on the seven byte-level BPE vocabularies of
// ../shared/models/gguf/vocab (46 strings each, the ids its .out files
// expect).
#include "text/byte_bpe.h"

#include <catch2/catch.hpp>
#include <random>
#include <set>
#include <sstream>

#include "base/error.h"
#include "binary_files.h"
#include "format/gguf.h"
#include "model/gguf_bpe_vocabulary.h"
#include "text/utf8.h"

using namespace nextword;
using testing::model_error_of;

namespace {

// `bytes` spelled in stand-ins, as a vocabulary spells its tokens.
std::string spelled(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) {
    const char32_t s = byte_character(static_cast<uint8_t>(c));
    if (s < 0x80) {
      out += static_cast<char>(s);
    } else {  // every stand-in is below U+0800
      out += static_cast<char>(0xC0 | (s >> 6));
      out += static_cast<char>(0x80 | (s & 0x3F));
    }
  }
  return out;
}

// The 256 byte tokens (id = byte), then these (ids 256 ...).
enum : int { kAB = 256, kBC, kABC, kSpaceA, kAA, kEnd, kUser, kUserLonger, kSpaceAB };
BpeVocabulary small(std::vector<std::string> merges, std::string pre = "gpt-2") {
  BpeVocabulary v;
  for (int b = 0; b < 256; ++b) v.tokens.push_back(spelled(std::string(1, static_cast<char>(b))));
  v.types.assign(256, kNormalToken);
  const std::pair<std::string, int32_t> more[] = {
      {"ab", kNormalToken},          {"bc", kNormalToken},        {"abc", kNormalToken},
      {spelled(" a"), kNormalToken}, {"aa", kNormalToken},        {"<|end|>", kControlToken},
      {"<u>", kUserDefinedToken},    {"<u>>", kUserDefinedToken}, {spelled(" ab"), kNormalToken}};
  for (const auto& [token, type] : more) {
    v.tokens.push_back(token);
    v.types.push_back(type);
  }
  v.merges = std::move(merges);
  v.pre = std::move(pre);
  return v;
}

std::vector<int> encode(const BpeVocabulary& v, std::string_view text) {
  return ByteBpeTokenizer(v, "small.gguf").encode(text);
}

using Ids = std::vector<int>;

// `text` with each byte that starts no UTF-8 sequence replaced by U+FFFD.
std::string replaced(std::string_view text) {
  std::string out;
  const char* end = text.data() + text.size();
  for (const char* p = text.data(); p < end;) {
    const size_t n = utf8_sequence_length(p, end);
    out += n == 0 ? std::string_view("\xEF\xBF\xBD") : std::string_view(p, n);
    p += n == 0 ? 1 : n;
  }
  return out;
}

}  // namespace

TEST_CASE("byte BPE: GPT-2's byte stand-ins", "[byte_bpe]") {
  CHECK(byte_character('!') == U'!');
  CHECK(byte_character('~') == U'~');
  CHECK(byte_character(0xE9) == U'\u00E9');
  CHECK(byte_character(0x00) == U'\u0100');
  CHECK(byte_character(' ') == U'\u0120');   // "Ġ"
  CHECK(byte_character('\n') == U'\u010A');  // "Ċ"
  CHECK(byte_character(0x7F) == U'\u0121');
  CHECK(byte_character(0xA0) == U'\u0142');
  CHECK(byte_character(0xAD) == U'\u0143');
  std::set<char32_t> seen;
  for (int b = 0; b < 256; ++b) {
    const char32_t c = byte_character(static_cast<uint8_t>(b));
    seen.insert(c);
    CHECK(character_byte(c) == b);
  }
  CHECK(seen.size() == 256);
  CHECK(character_byte(U' ') == -1);  // a space is spelled "Ġ"
  CHECK(character_byte(U'\u0144') == -1);
  CHECK(character_byte(U'\u4E2D') == -1);
}

TEST_CASE("byte BPE: merges by rank", "[byte_bpe]") {
  // The first merge first: "a b" then "ab c".
  CHECK(encode(small({"a b", "b c", "ab c"}), "abc") == Ids{kABC});
  // Without "ab c", the order of the first two decides.
  CHECK(encode(small({"a b", "b c"}), "abc") == Ids{kAB, 'c'});
  CHECK(encode(small({"b c", "a b"}), "abc") == Ids{'a', kBC});
  // Of equal pairs the leftmost merges first.
  CHECK(encode(small({"a a"}), "aaa") == Ids{kAA, 'a'});
  CHECK(encode(small({"a a"}), "aaaa") == Ids{kAA, kAA});
  // Merges stay within a pre-tokenizer's piece: "ab" and " ab"; the first
  // of two spaces is a piece of its own. With "a b" first, " ab" would be
  // " " "ab", which no merge joins.
  const BpeVocabulary spaces = small({spelled(" ") + " a", spelled(" a") + " b", "a b"});
  CHECK(encode(spaces, "ab ab") == Ids{kAB, kSpaceAB});
  CHECK(encode(spaces, "ab  ab") == Ids{kAB, ' ', kSpaceAB});
  CHECK(encode(small({"a b", spelled(" ") + " a", spelled(" a") + " b"}), " ab") == Ids{' ', kAB});
  CHECK(encode(spaces, "") == Ids{});
  // Llama 3's pre-tokenizer takes a piece that is a token whole.
  CHECK(encode(small({"a b"}, "llama-bpe"), "abc") == Ids{kABC});
  CHECK(encode(small({"a b"}, "gpt-2"), "abc") == Ids{kAB, 'c'});
}

TEST_CASE("byte BPE: user-defined and control tokens", "[byte_bpe]") {
  const ByteBpeTokenizer t(small({"a b"}), "small.gguf");
  // A user-defined token is found as it is spelled, the longest first.
  CHECK(t.encode("x<u>y") == Ids{'x', kUser, 'y'});
  CHECK(t.encode("x<u>>y") == Ids{'x', kUserLonger, 'y'});
  CHECK(t.encode("ab<u>ab") == Ids{kAB, kUser, kAB});
  CHECK(t.encode("<u") == Ids{'<', 'u'});
  // One that is not UTF-8 is never found (it would cut a character).
  BpeVocabulary odd = small({});
  odd.tokens.push_back("\xC3");
  odd.types.push_back(kUserDefinedToken);
  CHECK(ByteBpeTokenizer(odd, "odd.gguf").encode("\xC3\xA9") == Ids{0xC3, 0xA9});
  // A control token's spelling in text is text.
  const Ids end = t.encode("x<|end|>y");
  CHECK(std::find(end.begin(), end.end(), kEnd) == end.end());
  CHECK(t.decode(end) == "x<|end|>y");
  CHECK(encode(small({"a b"}, "llama-bpe"), "<|end|>") == t.encode("<|end|>"));
  // The bytes of each kind of token.
  CHECK(t.token_bytes(kSpaceA) == " a");
  CHECK(t.token_bytes(' ') == " ");
  CHECK(t.token_bytes('\n') == "\n");
  CHECK(t.token_bytes(0xE9) == "\xE9");
  CHECK(t.token_bytes(kUser) == "<u>");
  CHECK(t.token_bytes(kEnd) == "<|end|>");
  CHECK(t.find("<u>") == kUser);
  CHECK(t.find("nothing") == -1);
  CHECK(t.size() == 265);
  CHECK(t.type(kEnd) == kControlToken);
  try {
    (void)t.token_bytes(265);
    FAIL("an id past the vocabulary was read");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kInput);
    CHECK(e.message() == "token id 265 is not in the vocabulary (ids 0 to 264)");
  }
}

TEST_CASE("byte BPE: bytes that are not UTF-8, bytes without a token", "[byte_bpe]") {
  const ByteBpeTokenizer t(small({"a b"}), "small.gguf");
  // Each byte that starts no UTF-8 sequence is U+FFFD (EF BF BD).
  CHECK(t.encode("a\xFF"
                 "b") == Ids{'a', 0xEF, 0xBF, 0xBD, 'b'});
  CHECK(t.encode("\xE2\x82") == Ids{0xEF, 0xBF, 0xBD, 0xEF, 0xBF, 0xBD});
  // A byte whose stand-in is no token is dropped.
  BpeVocabulary missing = small({"a b"});
  missing.tokens[5] = "<five>";
  CHECK(ByteBpeTokenizer(missing, "m.gguf")
            .encode("a\x05"
                    "b") == Ids{'a', 'b'});
  // Any bytes, each pre-tokenizer: the ids write the text back, its
  // non-UTF-8 bytes as U+FFFD, and never a control token.
  std::mt19937 random(11);
  const char alphabet[] = {' ',    ' ',    'a',    'b',    'c',    '\'',   's',
                           '7',    '\n',   '<',    'u',    '>',    '\xC3', '\xA9',
                           '\xE4', '\xB8', '\xAD', '\xF0', '\x9F', '\xFF', '\x80'};
  for (const std::string& name : PreTokenizer::names()) {
    const ByteBpeTokenizer any(small({"a b", "b c", "ab c", "a a"}, name), "small.gguf");
    for (int round = 0; round < 200; ++round) {
      std::string text;
      const int length = static_cast<int>(random() % 30);
      for (int k = 0; k < length; ++k) text += alphabet[random() % sizeof alphabet];
      const Ids ids = any.encode(text);
      CHECK(any.decode(ids) == replaced(text));
      CHECK(std::find(ids.begin(), ids.end(), kEnd) == ids.end());
    }
  }
}

TEST_CASE("byte BPE: a vocabulary's faults name the field", "[byte_bpe]") {
  const auto fault = [](BpeVocabulary v) {
    return model_error_of([&] { ByteBpeTokenizer(std::move(v), "v.gguf"); });
  };
  CHECK(fault(small({"a b", "b c"})) == "(no error)");
  CHECK(fault(small({"a b", "a \xE2\x82\xAC"})) ==
        "v.gguf: metadata.tokenizer.ggml.merges[1]: \"\xE2\x82\xAC\" is not a token");
  CHECK(fault(small({"q b"})) ==
        "v.gguf: metadata.tokenizer.ggml.merges[0]: \"q b\" makes \"qb\", which is not a token");
  CHECK(fault(small({"ab"})) ==
        "v.gguf: metadata.tokenizer.ggml.merges[0]: \"ab\" is not two tokens with a space "
        "between");
  CHECK(fault(small({"a "})) ==
        "v.gguf: metadata.tokenizer.ggml.merges[0]: \"a \" is not two tokens with a space "
        "between");
  CHECK(fault(small({}, "gpt-5")) ==
        "v.gguf: metadata.tokenizer.ggml.pre: \"gpt-5\" is not a pre-tokenizer nextword knows "
        "(default, gpt-2, llama-bpe, qwen2, smollm, deepseek-llm, deepseek-coder, falcon, "
        "starcoder, refact, mpt, llama3, llama-v3, deepseek-r1-qwen, phi-2, roberta-bpe)");
  BpeVocabulary types = small({});
  types.types.pop_back();
  CHECK(fault(types) == "v.gguf: metadata.tokenizer.ggml.token_type: 264 types for 265 tokens");
  CHECK(fault(BpeVocabulary{}) == "v.gguf: metadata.tokenizer.ggml.tokens: no tokens");
  BpeVocabulary untyped = small({"a b"});
  untyped.types.clear();  // every token normal
  CHECK(ByteBpeTokenizer(untyped, "u.gguf").encode("ab") == Ids{kAB});
}

TEST_CASE("byte BPE: llama.cpp's test strings on seven vocabularies", "[byte_bpe][shared]") {
  const std::string dir = std::string(NEXTWORD_SHARED_DIR) + "/models/gguf/vocab/ggml-vocab-";
  int passed = 0;
  for (const char* name :
       {"gpt-2", "starcoder", "falcon", "deepseek-llm", "deepseek-coder", "mpt", "refact"}) {
    INFO(name);
    const auto g = GgufFile::open(dir + name + ".gguf");
    const ByteBpeTokenizer t(gguf_bpe_vocabulary(*g), g->path());
    // The strings, each ended by a line "__ggml_vocab_test__"; the ids, a
    // line each.
    const std::string inputs = testing::read_file(dir + name + ".gguf.inp");
    const std::string end = "\n__ggml_vocab_test__\n";
    std::istringstream outputs(testing::read_file(dir + name + ".gguf.out"));
    size_t at = 0;
    int strings = 0;
    for (std::string line; std::getline(outputs, line); ++strings) {
      const size_t next = inputs.find(end, at);
      REQUIRE(next != std::string::npos);
      const std::string text = inputs.substr(at, next - at);
      at = next + end.size();
      Ids expected;
      std::istringstream ids(line);
      for (int id = 0; ids >> id;) expected.push_back(id);
      INFO(escape_bytes(text));
      const Ids got = t.encode(text);
      CHECK(got == expected);
      CHECK(t.decode(got) == text);
      passed += got == expected;
    }
    CHECK(strings == 46);
    CHECK(at == inputs.size());
  }
  CHECK(passed == 7 * 46);
}

TEST_CASE("byte BPE: a GGUF file of another tokenizer", "[byte_bpe][shared]") {
  const std::string path =
      std::string(NEXTWORD_SHARED_DIR) + "/models/gguf/vocab/ggml-vocab-llama-spm.gguf";
  const auto g = GgufFile::open(path);
  CHECK(model_error_of([&] { gguf_bpe_vocabulary(*g); }) ==
        path + ": metadata.tokenizer.ggml.model: \"llama\" is not byte-level BPE (gpt2)");
}
