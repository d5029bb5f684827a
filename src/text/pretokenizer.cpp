#include "text/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cstdio>
#include <new>
#include <utility>

#include "base/error.h"
#include "text/utf8.h"

namespace nextword {
namespace {

// Unicode's White_Space, as the body of a character class.
constexpr const char* kSpace =
    "\\t\\n\\x{0B}\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
    "\\x{205F}\\x{3000}";

// `pattern` with every {s} read as a white-space character and {S} as any
// other character.
std::string with_space(std::string_view pattern) {
  std::string out;
  for (size_t at = 0; at < pattern.size(); ++at) {
    if (pattern.compare(at, 3, "{s}") == 0) {
      out += std::string("[") + kSpace + "]";
      at += 2;
    } else if (pattern.compare(at, 3, "{S}") == 0) {
      out += std::string("[^") + kSpace + "]";
      at += 2;
    } else if (pattern.compare(at, 3, "{w}") == 0) {  // inside a class: white space
      out += kSpace;
      at += 2;
    } else {
      out += pattern[at];
    }
  }
  return out;
}

// GPT-2's: English contractions, a word, a number or a run of other
// characters (each with the space before it), white space up to the
// space before the next word, white space.
constexpr const char* kGpt2 =
    "'(?:s|t|re|ve|m|ll|d)| ?\\p{L}+| ?\\p{N}+| ?[^{w}\\p{L}\\p{N}]+|{s}+(?!{S})|{s}+";

// Llama 3's: contractions in either case, a word with one character
// before it that is not a letter, digit or line end, numbers of up to
// `digits`, other characters with the line ends after them, white space
// ending in line ends, white space up to the next word's space.
std::string llama3(const char* digits) {
  return std::string(
             "'(?:[sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
             "\\p{N}") +
         digits + "| ?[^{w}\\p{L}\\p{N}]+[\\r\\n]*|{s}*[\\r\\n]+|{s}+(?!{S})|{s}+";
}

// The letters DeepSeek's LLM tokenizer makes words of: the cased letters
// (Lu, Ll, Lt) its tokenizer.json lists, each range first to last.
constexpr std::pair<char32_t, char32_t> kDeepseekLetters[] = {
    {0x41, 0x5A},       {0x61, 0x7A},       {0xB5, 0xB5},       {0xC0, 0xD6},
    {0xD8, 0xF6},       {0xF8, 0x1BA},      {0x1BC, 0x1BF},     {0x1C4, 0x293},
    {0x295, 0x2AF},     {0x370, 0x373},     {0x376, 0x377},     {0x37B, 0x37D},
    {0x37F, 0x37F},     {0x386, 0x386},     {0x388, 0x38A},     {0x38C, 0x38C},
    {0x38E, 0x3A1},     {0x3A3, 0x3F5},     {0x3F7, 0x481},     {0x48A, 0x52F},
    {0x531, 0x556},     {0x10A0, 0x10C5},   {0x13A0, 0x13F5},   {0x13F8, 0x13FD},
    {0x1C90, 0x1CBA},   {0x1CBD, 0x1CBF},   {0x1D00, 0x1D2B},   {0x1D6B, 0x1D77},
    {0x1D79, 0x1D9A},   {0x1E00, 0x1F15},   {0x1F18, 0x1F1D},   {0x1F20, 0x1F45},
    {0x1F48, 0x1F4D},   {0x1F50, 0x1F57},   {0x1F59, 0x1F59},   {0x1F5B, 0x1F5B},
    {0x1F5D, 0x1F5D},   {0x1F5F, 0x1F7D},   {0x1F80, 0x1FB4},   {0x1FB6, 0x1FBC},
    {0x1FBE, 0x1FBE},   {0x1FC2, 0x1FC4},   {0x1FC6, 0x1FCC},   {0x1FD0, 0x1FD3},
    {0x1FD6, 0x1FDB},   {0x1FE0, 0x1FEC},   {0x1FF2, 0x1FF4},   {0x1FF6, 0x1FFC},
    {0x2102, 0x2102},   {0x2107, 0x2107},   {0x210A, 0x2113},   {0x2115, 0x2115},
    {0x2119, 0x211D},   {0x2124, 0x2124},   {0x2126, 0x2126},   {0x2128, 0x2128},
    {0x212A, 0x212D},   {0x212F, 0x2134},   {0x2139, 0x2139},   {0x213C, 0x213F},
    {0x2145, 0x2149},   {0x214E, 0x214E},   {0x2183, 0x2184},   {0x2C00, 0x2C7B},
    {0x2C7E, 0x2CE4},   {0x2CEB, 0x2CEE},   {0x2CF2, 0x2CF3},   {0xA640, 0xA66D},
    {0xA680, 0xA69B},   {0xA722, 0xA76F},   {0xA771, 0xA787},   {0xA78B, 0xA78E},
    {0xAB70, 0xABBF},   {0xFB00, 0xFB06},   {0xFB13, 0xFB17},   {0xFF21, 0xFF3A},
    {0xFF41, 0xFF5A},   {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};

// A character class of `ranges`.
template <size_t N>
std::string char_class(const std::pair<char32_t, char32_t> (&ranges)[N]) {
  std::string out = "[";
  char hex[32];
  for (const auto& [first, last] : ranges) {
    std::snprintf(hex, sizeof hex, "\\x{%X}-\\x{%X}", static_cast<unsigned>(first),
                  static_cast<unsigned>(last));
    out += hex;
  }
  return out + "]";
}

// Han ideographs, the scripts from U+0800 up to them, and Hangul: the
// runs DeepSeek's tokenizers keep apart from the words around them.
constexpr const char* kDeepseekCjk = "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+";

// Each name's expressions, in the order they cut.
std::vector<std::string> expressions_of(std::string_view name) {
  if (name == "gpt-2" || name == "mpt" || name == "phi-2" || name == "roberta-bpe") {
    return {kGpt2};
  }
  if (name == "default") {
    return {"[\\p{P}$+<=>^~|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"};
  }
  if (name == "llama-bpe" || name == "llama3" || name == "llama-v3") return {llama3("{1,3}")};
  if (name == "qwen2" || name == "deepseek-r1-qwen") return {llama3("")};
  if (name == "smollm" || name == "starcoder" || name == "refact") return {"\\p{N}", kGpt2};
  if (name == "falcon") return {"[\\p{P}$+<=>^~|`]+", kGpt2, "[0-9][0-9][0-9]"};
  if (name == "deepseek-llm") {
    return {
        "[\\r\\n]",
        "{s}?" + char_class(kDeepseekLetters) + "+",
        "{s}?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+",
        "{s}+\\z",
        kDeepseekCjk,
        "\\p{N}+"};
  }
  if (name == "deepseek-coder") {
    return {"[\\r\\n]", "{s}?\\p{L}+", "{s}?\\p{P}+", kDeepseekCjk, "\\p{N}"};
  }
  return {};
}

// The bytes of the UTF-8 character starting at `at`.
size_t character_length(std::string_view text, size_t at) {
  const size_t n = utf8_sequence_length(text.data() + at, text.data() + text.size());
  return n == 0 ? 1 : n;
}

}  // namespace

struct PreTokenizer::Expression {
  pcre2_code* code = nullptr;
  ~Expression() { pcre2_code_free(code); }
};

const std::vector<std::string>& PreTokenizer::names() {
  static const std::vector<std::string> all = {
      "default", "gpt-2",      "llama-bpe", "qwen2", "smollm", "deepseek-llm", "deepseek-coder",
      "falcon",  "starcoder",  "refact",    "mpt",   "llama3", "llama-v3",     "deepseek-r1-qwen",
      "phi-2",   "roberta-bpe"};
  return all;
}

bool PreTokenizer::known(std::string_view name) {
  const auto& all = names();
  return std::find(all.begin(), all.end(), name) != all.end();
}

PreTokenizer::PreTokenizer(std::string_view name) : name_(name) {
  if (!known(name)) {
    throw Error(ExitCode::kFailure, "no pre-tokenizer is called \"" + name_ + "\"");
  }
  whole_tokens_first_ = name == "llama-bpe" || name == "llama3" || name == "llama-v3";
  for (const std::string& pattern : expressions_of(name)) {
    const std::string source = with_space(pattern);
    int code = 0;
    PCRE2_SIZE offset = 0;
    auto expression = std::make_shared<Expression>();
    expression->code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source.data()), source.size(),
                      PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &code, &offset, nullptr);
    if (expression->code == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(code, message, sizeof message);
      throw Error(ExitCode::kFailure, "pre-tokenizer " + name_ + ": expression \"" + source +
                                          "\" at " + std::to_string(offset) + ": " +
                                          reinterpret_cast<const char*>(message));
    }
    // Compiled to machine code where PCRE2 can (it then matches several
    // times faster); where it cannot, pcre2_match interprets.
    pcre2_jit_compile(expression->code, PCRE2_JIT_COMPLETE);
    expressions_.push_back(std::move(expression));
  }
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string_view> pieces;
  if (text.empty()) return pieces;
  pieces.push_back(text);
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
      pcre2_match_data_create(1, nullptr), &pcre2_match_data_free);
  if (!match) throw std::bad_alloc();
  std::vector<std::string_view> next;
  for (const auto& expression : expressions_) {
    next.clear();
    for (const std::string_view piece : pieces) {
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
      size_t done = 0;  // the end of the last piece cut from `piece`
      size_t at = 0;    // where the next match is looked for
      while (at < piece.size()) {
        const int found = pcre2_match(expression->code, subject, piece.size(), at,
                                      PCRE2_NO_UTF_CHECK, match.get(), nullptr);
        if (found < 0) break;  // no more matches (or a limit: the rest stays whole)
        const PCRE2_SIZE* range = pcre2_get_ovector_pointer(match.get());
        if (range[0] > done) next.push_back(piece.substr(done, range[0] - done));
        if (range[1] > range[0]) {
          next.push_back(piece.substr(range[0], range[1] - range[0]));
          done = at = range[1];
        } else {  // an empty match (none of the expressions has one): step on
          at = range[0] + character_length(piece, range[0]);
          done = std::max(done, static_cast<size_t>(range[0]));
        }
      }
      if (done < piece.size()) next.push_back(piece.substr(done));
    }
    pieces.swap(next);
  }
  return pieces;
}

}  // namespace nextword
