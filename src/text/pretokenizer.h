// The pre-tokenizers of byte-level BPE vocabularies (GGUF's
// tokenizer.ggml.pre): a text cut into pieces, words with their leading
// space, runs of digits, punctuation, runs of white space, before any
// merge (text/byte_bpe.h merges within a piece, never across two).
//
// Each pre-tokenizer is a list of regular expressions, taken in turn: the
// first cuts the text, each next one cuts every piece the ones before it
// made. Within a piece, each match of the expression is a piece and so is
// each stretch between two matches, so the pieces always cover the text.
// The expressions are those of the models' own tokenizer.json files, run
// by PCRE2 in UTF mode with Unicode properties (\p{L} letters, \p{N}
// numbers, \p{P} punctuation, from PCRE2's own tables: Unicode 14 in
// Debian 12's 10.42); white space is Unicode's White_Space
// property (spaces, tabs, line ends, U+0085, U+00A0, U+1680, U+2000-U+200A,
// U+2028, U+2029, U+202F, U+205F, U+3000), spelled out rather than \s,
// whose PCRE2 meaning differs (it adds U+180E).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nextword {

class PreTokenizer {
 public:
  // The names tokenizer.ggml.pre may hold that nextword reads, in the order
  // a message lists them.
  static const std::vector<std::string>& names();
  // Whether `name` is one of names().
  static bool known(std::string_view name);

  // The pre-tokenizer called `name`; an Error (exit 1) when it is not
  // known() (callers check first and name the file's field).
  explicit PreTokenizer(std::string_view name);

  const std::string& name() const { return name_; }
  // Whether a piece that is a token as a whole is that token, whatever the
  // merges would make of it (Llama 3's tokenizer: ignore_merges).
  bool whole_tokens_first() const { return whole_tokens_first_; }

  // The pieces of `text`, which must be valid UTF-8 (text/utf8.h), each a
  // view into it, in order, none empty, together the whole text. Should an
  // expression fail to run to its end on a piece (PCRE2's match limit, on
  // megabytes of one kind of character), the rest of that piece stays one
  // piece.
  std::vector<std::string_view> split(std::string_view text) const;

  struct Expression;  // a compiled expression (pretokenizer.cpp)

 private:
  std::string name_;
  bool whole_tokens_first_ = false;
  std::vector<std::shared_ptr<const Expression>> expressions_;
};

}  // namespace nextword
