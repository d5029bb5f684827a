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

// Words as running text, one at a time: no space before , . ! ? ; : ) ] }
// % … a clitic (n't, or ' and a letter or digit: 's, 're, the 'Neil of a
// WikiText `O 'Neil`) or a closing quote, none after ( [ { or an opening
// quote (straight double quotes alternate between opening and closing).
class RunningText {
 public:
  // Appends to `text`, after a double quote when `double_open`.
  RunningText(std::string& text, bool double_open);
  void append(std::string_view word);
  // The next word hugs the text before it (WikiText's `@-@` joins).
  void attach_next() { attach_next_ = true; }
  bool double_open() const { return double_open_; }

 private:
  std::string& text_;
  bool double_open_;
  bool attach_next_;
};

// The words appended to `text` as running text; the quotes and last
// character of what comes before count too.
void append_as_text(std::string& text, const std::vector<std::string>& words);

// Capitalizes, from byte `from` on, the first letter of each sentence (after
// ". ", "! " or "? ", a quote between allowed, or after an opening quote)
// and the word "i": the
// vocabulary is lowercase, the text a reader gets should not be.
void capitalize_sentences(std::string& text, size_t from);

}  // namespace nextword
