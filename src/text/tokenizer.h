// Splitting a phrase into the words the model reads.
//
// The rules are part of the model format (data/FORMAT.md, "Tokenizer"):
// whitespace separates words; with split_punctuation every punctuation mark
// is a word of its own, except an apostrophe or hyphen inside a word
// ("don't", "well-known"); with lowercase, A-Z and Latin-1 capitals are
// lowered. Curly quotes are read as straight ones.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nextword {

// Whether a model reads whole words (this file's tokenizer) or the subword
// pieces of a sentencepiece model (text/subword.h), which take no switches.
enum class TokenizerKind { kWords, kSentencepiece };

// The tokenizer's switches, stored in a model's config (data/FORMAT.md).
struct TokenizerOptions {
  bool lowercase = true;
  bool split_punctuation = true;
  TokenizerKind kind = TokenizerKind::kWords;
};

std::vector<std::string> tokenize(std::string_view text, const TokenizerOptions& options);

// The characters of `text` as the tokenizer reads them: lowered when
// options.lowercase, curly quotes straight.
std::string normalized_text(std::string_view text, const TokenizerOptions& options);

// The words separated by single spaces, for messages and for phrases given
// as several command-line arguments.
std::string join(const std::vector<std::string>& words);

}  // namespace nextword
