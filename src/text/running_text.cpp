#include "text/running_text.h"

#include <algorithm>
#include <utility>

#include "text/tokenizer.h"
#include "text/words.h"

namespace nextword {
namespace {

bool one_of(std::string_view word, std::string_view marks) {
  return word.size() == 1 && marks.find(word[0]) != std::string_view::npos;
}

constexpr std::string_view kEnDash = "\xE2\x80\x93";
constexpr std::string_view kEmDash = "\xE2\x80\x94";

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_number(std::string_view word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), is_digit);
}

bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool is_capital(char c) { return c >= 'A' && c <= 'Z'; }

// A word, not a mark (nor a dash or an ellipsis, whose bytes are not ASCII).
bool is_word(std::string_view word) { return has_letter_or_digit(word); }

// The marks that hug the word before them.
bool closes(std::string_view word) { return one_of(word, ",.!?;:)]}%") || word == "\xE2\x80\xA6"; }

// WikiText's clitics (n't, 's, 're, the 'Neil of `O 'Neil`), which hug the
// word before and make one word with it, as the tokenizer reads "don't".
bool is_clitic(std::string_view word) {
  return word == "n't" ||
         (word.size() >= 2 && word[0] == '\'' && is_word_byte(static_cast<unsigned char>(word[1])));
}

// A word that goes on the number the text ends with: digits after "3." or
// "10:" (a decimal, a time, a ratio; "9:30PM", "0.050-inch" too; "in 1990.
// 25 people" reads as 1990.25, which held-out text never had), or three
// after "1," or "1,000," (a group of thousands: "in 1990, 200 people" stays
// apart, a first group has at most three digits; "1, 2 and 3" too, a group
// after a comma has three). Wikipedia's page numbers after a citation,
// "1918.:14", go on the mark too.
bool continues_number(std::string_view text, std::string_view word) {
  const size_t digits =
      static_cast<size_t>(std::find_if_not(word.begin(), word.end(), is_digit) - word.begin());
  if (digits == 0 || text.size() < 2) return false;
  const char mark = text.back();
  const char before = text[text.size() - 2];
  if (mark == ':' && (before == '.' || before == '"' || before == ')')) return true;
  if (!is_digit(before)) return false;
  if (mark == '.' || mark == ':') return true;
  if (mark != ',' || digits != 3) return false;
  size_t start = text.size() - 1;
  while (start > 0 && is_digit(text[start - 1])) --start;
  const size_t group = text.size() - 1 - start;
  return start > 0 && text[start - 1] == ',' ? group == 3 : group <= 3;
}

// A letter before a period after a letter and a period ("U." or "e.g."):
// initials and abbreviations written without spaces, U.S., e.g., a.k.a.
// (held out Wikipedia writes "U.S." six times as often as "J. R. R.").
bool continues_initials(std::string_view text, std::string_view word, std::string_view next) {
  const size_t n = text.size();
  return word.size() == 1 && is_ascii_letter(word[0]) && next == "." && n >= 2 &&
         text[n - 1] == '.' && is_ascii_letter(text[n - 2]) &&
         (n == 2 || !is_word_byte(static_cast<unsigned char>(text[n - 3])));
}

bool ends_in_s(std::string_view text) { return text.ends_with('s') || text.ends_with('S'); }

// Two digits, or two and an s: the year after an apostrophe ('69, '90s).
bool is_year_elision(std::string_view word) {
  return word.size() >= 2 && is_digit(word[0]) && is_digit(word[1]) &&
         (word.size() == 2 || word.substr(2) == "s");
}

// The single quotes in the rest of the sentence that may close one, those
// not after a word ending in s.
std::ptrdiff_t closing_quotes_ahead(std::span<const std::string_view> after) {
  std::ptrdiff_t quotes = 0;
  for (size_t i = 1; i < after.size(); ++i) {
    if (after[i] == "." || after[i] == "!" || after[i] == "?") break;
    if (after[i] == "'" && !ends_in_s(after[i - 1])) ++quotes;
  }
  return quotes;
}

// One or two capitals: the S and L of S&L, the AT and T of AT&T.
bool is_short_capitals(std::string_view word) {
  return !word.empty() && word.size() <= 2 && std::all_of(word.begin(), word.end(), is_capital);
}

// The last word of the text, when the text ends with one.
std::string_view last_word(std::string_view text) {
  size_t start = text.size();
  while (start > 0 && is_word_byte(static_cast<unsigned char>(text[start - 1]))) --start;
  return text.substr(start);
}

}  // namespace

RunningText::RunningText(std::string& text, OpenQuotes open)
    : text_(text),
      open_(open),
      attach_next_(!text.empty() &&
                   (std::string_view("([{$#/").find(text.back()) != std::string_view::npos ||
                    (open.double_quote && text.back() == '"') ||
                    (open.single_quote && text.back() == '\''))) {}

void RunningText::append(std::span<const std::string_view> words, size_t i) {
  if (space_before(words, i)) text_ += ' ';
  text_ += words[i];
}

bool RunningText::space_before(std::span<const std::string_view> words, size_t i) {
  const std::string_view word = words[i];
  const std::string_view next = i + 1 < words.size() ? words[i + 1] : "";
  const std::string_view last = last_word(text_);
  // Not after a space: at the start, after ( [ { or an opening quote.
  const bool space = !text_.empty() && !std::exchange(attach_next_, false);
  if (closes(word) || is_clitic(word)) return false;
  if (word == "\"") return double_quote_space(space, next);
  if (word == "'") return single_quote_space(space, words.subspan(i + 1));
  // A hyphen cut from its word ("mid- to late-", "B- and C-cars"), a plus
  // of C++ or A+.
  if ((word == "-" && !last.empty() && (next == "to" || next == "and" || next == "or")) ||
      (word == "+" && ((last.size() == 1 && is_capital(last[0])) || text_.ends_with('+'))))
    return false;
  if (one_of(word, "([{$#")) {
    attach_next_ = true;
    // A plural's (s), "rate(s)"; a dollar's country, "US$".
    const bool after_word =
        (word == "(" && next == "s" && i + 2 < words.size() && words[i + 2] == ")") ||
        (word == "$" && is_short_capitals(last));
    return space && !after_word;
  }
  // A slash and an em dash hug both words ("and/or", "characters—a":
  // held-out Wikipedia writes them so four times in five), an en dash two
  // numbers or two names ("1991–1992", "2011–present", "Richmond–Fremont";
  // between other words it stands apart twice as often), an ampersand two short capitals
  // ("AT&T", "S&L"), a hyphen a quoted word and the next ("Broken"-era).
  if (word == "/" || word == kEmDash ||
      (word == kEnDash &&
       ((!text_.empty() && is_digit(text_.back()) && (is_number(next) || next == "present")) ||
        (!last.empty() && is_capital(last[0]) && is_capital(next[0])))) ||
      (word == "&" && is_short_capitals(last) && is_short_capitals(next)) ||
      (word == "-" && text_.ends_with('"') && !open_.double_quote && is_word(next))) {
    attach_next_ = true;
    return false;
  }
  if (continues_number(text_, word) || continues_initials(text_, word, next)) return false;
  return space;
}

bool RunningText::double_quote_space(bool space, std::string_view next) {
  // A quote at the start or after an opening bracket opens, one before a
  // closing mark closes, whatever the count says (the text may have opened
  // one before it began, or never closed one).
  if (space && (open_.double_quote || closes(next))) {
    open_.double_quote = false;
    return false;
  }
  open_.double_quote = attach_next_ = true;
  return space;
}

bool RunningText::single_quote_space(bool space, std::span<const std::string_view> after) {
  const std::string_view next = after.empty() ? "" : after.front();
  const char last = text_.empty() ? '\0' : text_.back();
  if (!is_word(next) || (space && open_.single_quote)) {  // a closing quote
    open_.single_quote = false;
    return false;
  }
  if (is_year_elision(next)) {  // the '90s, the class of '69
    attach_next_ = true;
    return space;
  }
  if ((last == '"' || last == ')') && next == "s") {  // "Buffy"'s
    attach_next_ = true;
    return false;
  }
  // After a word ending in s, a plural's possessive (the players' union),
  // unless a quote ahead in the sentence can close this one ('Risk' after
  // "was"): one that is not itself after a word ending in s (Isis' quest).
  if (space && ends_in_s(text_) && closing_quotes_ahead(after) % 2 == 0) return false;
  open_.single_quote = attach_next_ = true;
  return space;
}

OpenQuotes open_quotes(std::string_view text) {
  const std::vector<std::string> words = tokenize(text, {false, true});
  std::string replayed;
  RunningText running(replayed, {});
  const std::vector<std::string_view> views(words.begin(), words.end());
  for (size_t i = 0; i < views.size(); ++i) running.append(views, i);
  return running.open_quotes();
}

void append_as_text(std::string& text, const std::vector<std::string>& words) {
  RunningText running(text, open_quotes(text));
  const std::vector<std::string_view> views(words.begin(), words.end());
  for (size_t i = 0; i < views.size(); ++i) running.append(views, i);
}

void capitalize_sentences(std::string& text, size_t from) {
  for (size_t i = from; i < text.size(); ++i) {
    const bool starts_word = i == 0 || text[i - 1] == ' ' || text[i - 1] == '"';
    if (!starts_word) continue;
    const bool lone_i =
        text[i] == 'i' &&
        (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\'' || text[i + 1] == ',' ||
         text[i + 1] == '.' || text[i + 1] == '!' || text[i + 1] == '?' || text[i + 1] == '"');
    if (lone_i || starts_sentence(std::string_view(text).substr(0, i))) {
      text[i] = written_form(std::string_view(text).substr(i, 1), true)[0];
    }
  }
}

}  // namespace nextword
