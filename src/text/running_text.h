// Words written back as text, the way people write it: the joiner that
// `generate`, serve and `tokenize --join` write a word model's words with.
//
// The tokenizer (text/tokenizer.h) cuts "1,000", "3.5", "10:30", "U.S." and
// "(a)" into words and marks and drops the spaces; these rules put the
// spaces back where a writer puts them, from the words alone. Whatever they
// decide, the text reads as the same words again: a space is left out only
// where the tokenizer cuts anyway (next to a mark that is not an apostrophe
// or hyphen inside a word), except for WikiText's clitics ("do" "n't").
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nextword {

// The quotes opened and not yet closed: straight double quotes alternate,
// single ones open before a word and close after one.
struct OpenQuotes {
  bool double_quote = false;
  // A double quote opened inside an open one: a title quoted in a quotation.
  bool inner_double_quote = false;
  bool single_quote = false;
};

// Words as running text, one at a time, each seen with the words after it
// when they are known. The rules, each chosen from the english model's
// training text (tools/join_roundtrip.py measures them on held-out text):
// - no space before , . ! ? ; : ) ] } % … or a clitic (n't, or ' and a
//   letter or digit: 's, 're, the 'Neil of a WikiText `O 'Neil`);
// - none after ( [ { $ # and none either side of / (and/or), nor of & between
//   short capitals (AT&T); "rate(s)", "zinc(II)", "US$", "mid- to late-" hug
//   the word before, a sign its number after a word (+5, about -55, ~0.86);
// - dashes and ellipses are spaced as the text's last one; the first em
//   dash hugs (this—that), an en dash hugs two numbers (1991–1992) but for
//   dates written in full (15 July 1919 – 8 February 1999) and two names
//   (Richmond–Fremont); an ellipsis stands apart between words, hugs a name
//   or number before it and the word after an opening quote;
// - none inside a number: 1,000,000 (groups of three after a comma), 3.5,
//   10:30, and Wikipedia's page numbers, "1918.:14";
// - none inside abbreviations, a letter and a period each: U.S., e.g.,
//   a.k.a., Filmcritic.com; but a person's initials before a name are
//   spaced (H. G. Wells);
// - quotes: a double quote opens at the start, after an opening bracket and
//   after a word before a title (the, called: inside a quotation too),
//   closes before , . ; : ! ? ) and otherwise alternates; a single one
//   closes one that is open or comes before a mark, hugs a year ('90s), is a
//   possessive after a closing quote ("Buffy"'s) and after a word ending in
//   s when no quote ahead closes it (the players' union), and otherwise opens.
class RunningText {
 public:
  // Appends to `text`, with the quotes `open` left open by what it holds.
  RunningText(std::string& text, OpenQuotes open);
  // Appends words[i]; the words after it (none when they are not known yet)
  // say what it is: the rest of a number, a quote that opens or closes.
  void append(std::span<const std::string_view> words, size_t i);
  // The next word hugs the text before it (WikiText's `@-@` joins).
  void attach_next() { attach_next_ = true; }
  OpenQuotes open_quotes() const { return open_; }

 private:
  // Whether a space comes before words[i].
  bool space_before(std::span<const std::string_view> words, size_t i);
  // The same for a double or a single quote, which opens or closes one;
  // `space` is whether a word would get one.
  bool double_quote_space(bool space, std::span<const std::string_view> after);
  bool single_quote_space(bool space, std::span<const std::string_view> after);
  // The same for the first period of an ellipsis, and for a word after one.
  bool ellipsis_space(bool space, std::span<const std::string_view> ellipsis);
  bool after_ellipsis_space() const;

  std::string& text_;
  OpenQuotes open_;
  bool attach_next_;
};

// The quotes `text` leaves open, read as RunningText reads its words.
OpenQuotes open_quotes(std::string_view text);

// The words appended to `text` as running text; the quotes and last
// characters of what comes before count too.
void append_as_text(std::string& text, const std::vector<std::string>& words);

// Capitalizes, from byte `from` on, the first letter of each sentence (at
// the text's start, after ". ", "! " or "? ", a quote between allowed, or
// after an opening quote) and the word "i": the vocabulary is lowercase, the
// text a reader gets should not be.
void capitalize_sentences(std::string& text, size_t from);

}  // namespace nextword
