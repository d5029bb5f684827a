#include "text/running_text.h"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <utility>

#include "text/tokenizer.h"
#include "text/words.h"

namespace nextword {
namespace {

bool one_of(std::string_view word, std::string_view marks) {
  return word.size() == 1 && marks.find(word[0]) != std::string_view::npos;
}

bool listed(std::string_view word, std::initializer_list<std::string_view> words) {
  return std::find(words.begin(), words.end(), word) != words.end();
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

// Abbreviations of capitals written without spaces even before a name: in
// the english model's training text each of these comes before a capitalized
// word without spaces at least four times in five (U.S. 8,901 of 8,943,
// D.C. 249 of 278), where a person's initials are spaced (H. G. Wells 134
// of 185, J. R. R. Tolkien 146 of 196).
bool is_capitals_abbreviation(std::string_view letters) {
  return listed(letters, {"US", "USA", "UK", "UN", "DC", "BC", "AD", "LA", "HMS", "GI"});
}

// A letter before a period after a letter and a period ("U." or "e.g."):
// initials and abbreviations written without spaces, U.S., e.g., a.k.a.
// (held out Wikipedia writes "U.S." six times as often as "J. R. R."),
// except a person's initials: capitals before a capitalized word, which the
// training text spaces 70 times in 100 ("H. G. Wells", "R. M. Hare") unless
// they are a known abbreviation ("U.S. Army"). `after` is the letter and the
// words after it.
bool continues_initials(std::string_view text, std::span<const std::string_view> after) {
  const size_t n = text.size();
  const std::string_view word = after[0];
  if (!(word.size() == 1 && is_ascii_letter(word[0]) && after.size() >= 2 && after[1] == "." &&
        n >= 2 && text[n - 1] == '.' && is_ascii_letter(text[n - 2]) &&
        (n == 2 || !is_word_byte(static_cast<unsigned char>(text[n - 3])))))
    return false;
  if (!is_capital(word[0])) return true;
  // The capitals written so far ("H.G." of "H.G.W."), then those ahead.
  std::string letters;
  size_t start = n;
  while (start >= 2 && text[start - 1] == '.' && is_capital(text[start - 2]) &&
         (start == 2 || !is_word_byte(static_cast<unsigned char>(text[start - 3])))) {
    letters.insert(letters.begin(), text[start - 2]);
    start -= 2;
  }
  size_t k = 0;
  while (k + 1 < after.size() && after[k].size() == 1 && is_ascii_letter(after[k][0]) &&
         after[k + 1] == ".") {
    letters += after[k];
    k += 2;
  }
  const bool before_name = k < after.size() && after[k].size() > 1 && is_capital(after[k][0]);
  return !before_name || is_capitals_abbreviation(letters);
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

bool is_month(std::string_view word) {
  return listed(word, {"January", "February", "March", "April", "May", "June", "July", "August",
                       "September", "October", "November", "December"});
}

// The word before the last word of the text ("July" of "15 July 1919").
std::string_view word_before_last(std::string_view text) {
  text.remove_suffix(last_word(text).size());
  if (!text.ends_with(' ')) return {};
  text.remove_suffix(1);
  return last_word(text);
}

// Whether the last `mark` of the text has a space before it; none when the
// text has none: a writer spaces a text's dashes and ellipses alike (in the
// training text an em dash after a spaced one is spaced 224 times in 238,
// after one that hugs its words hugs them 1,114 times in 1,131).
std::optional<bool> spaced_like_last(std::string_view text, std::string_view mark) {
  const size_t at = text.rfind(mark);
  if (at == std::string_view::npos) return std::nullopt;
  return at > 0 && text[at - 1] == ' ';
}

// Whether a dash hugs the words either side of it, `next` and `after_next`
// the words after it. An em dash hugs them unless the text spaced its last
// one (training text: 2,179 of 2,724 first em dashes hug). An en dash hugs
// two numbers ("1991–1992", "2011–present") but for dates written in full
// ("6 December 1421 – 21 May 1471": 152 of 152 apart), and two words as the
// text's last en dash between words did, or else two names
// ("Richmond–Fremont"), where other words stand apart three times in four.
bool dash_hugs(std::string_view text, std::string_view dash, std::string_view next,
               std::string_view after_next) {
  if (dash == kEmDash) return !spaced_like_last(text, kEmDash).value_or(false);
  if (!text.empty() && is_digit(text.back()) && (is_number(next) || next == "present"))
    return !(is_month(word_before_last(text)) && is_month(after_next));
  const size_t at = text.rfind(kEnDash);
  if (at != std::string_view::npos) {
    const size_t before = at > 0 && text[at - 1] == ' ' ? at - 1 : at;
    if (before == 0 || !is_digit(text[before - 1])) return before == at;
  }
  const std::string_view last = last_word(text);
  return !last.empty() && is_capital(last[0]) && !next.empty() && is_capital(next[0]);
}

// Three periods, and no fourth: an ellipsis.
bool is_ellipsis(std::span<const std::string_view> periods) {
  return periods.size() >= 3 && periods[1] == "." && periods[2] == "." &&
         (periods.size() == 3 || periods[3] != ".");
}

// Words before a title, which a quote opens after and hardly ever closes
// after: the training text writes a space between each of them and a double
// quote at least 98 times in 100 ("the" 7,871 of 7,900, "called" 1,279 of
// 1,283), so a quote after one opens even inside a quotation: "I loved the
// "Flash Gordon" serials" (the list of 10 words does as well on it as one of
// 22 with "of", "in" and "that").
bool comes_before_quote(std::string_view word) {
  return listed(
      word, {"the", "an", "as", "called", "named", "titled", "entitled", "his", "her", "their"});
}

// A top-level domain after a name and a period, or a name after "www.":
// the training text writes "Filmcritic.com", "OpenOffice.org" together every
// time (234 of 234 for com, org, net and edu).
bool is_web_address_part(std::string_view text, std::string_view word) {
  if (text.ends_with("www.")) return true;
  if (!(text.size() >= 2 && text.back() == '.' &&
        is_word_byte(static_cast<unsigned char>(text[text.size() - 2]))))
    return false;
  return listed(word, {"com", "org", "net", "edu", "gov"});
}

bool is_roman_numeral(std::string_view word) {
  return !word.empty() && word.size() <= 4 &&
         word.find_first_not_of("IVX") == std::string_view::npos;
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
  if (word == "." && is_ellipsis(words.subspan(i))) return ellipsis_space(space, words.subspan(i));
  // A mark after "the", where the training text dropped a word (a link):
  // "the ." 93 times in 96, "the ," 37 in 44.
  if ((word == "." || word == ",") && last == "the" && !is_ellipsis(words.subspan(i))) return space;
  if (closes(word) || is_clitic(word)) return false;
  if (text_.ends_with("...") && is_word(word) && !after_ellipsis_space()) return false;
  if (is_web_address_part(text_, word)) return false;
  if (word == "\"") return double_quote_space(space, words.subspan(i + 1));
  if (word == "'") return single_quote_space(space, words.subspan(i + 1));
  // A hyphen cut from its word ("mid- to late-", "B- and C-cars"), a plus
  // of C++ or A+.
  if ((word == "-" && !last.empty() && (next == "to" || next == "and" || next == "or")) ||
      (word == "+" && ((last.size() == 1 && is_capital(last[0])) || text_.ends_with('+'))))
    return false;
  // A sign: "+", "-" or "~" before a number after a lowercase word, a comma
  // or a bracket ("states +5", "about -55", "(~0.86"): the training text
  // hugs the number 244 times in 268 there, where after a number or a
  // capitalized word it stands apart ("871 - 899").
  if ((word == "+" || word == "-" || word == "~") && !next.empty() && is_digit(next[0]) &&
      (text_.empty() || std::string_view(",([").find(text_.back()) != std::string_view::npos ||
       (!last.empty() && !is_capital(last[0]) && !is_digit(last[0])))) {
    attach_next_ = true;
    return space;
  }
  if (one_of(word, "([{$#")) {
    attach_next_ = true;
    // A plural's (s), "rate(s)"; an oxidation state, "zinc(II)" (the
    // training text hugs a word 125 times in 145); a dollar's country, "US$".
    const bool after_word = (word == "(" && i + 2 < words.size() && words[i + 2] == ")" &&
                             (next == "s" || (is_roman_numeral(next) && is_word(last)))) ||
                            (word == "$" && is_short_capitals(last));
    return space && !after_word;
  }
  if (word == kEmDash || word == kEnDash) {
    attach_next_ = dash_hugs(text_, word, next, i + 2 < words.size() ? words[i + 2] : "");
    return space && !attach_next_;
  }
  // A slash hugs both words ("and/or": held-out Wikipedia writes it so four
  // times in five), an ampersand two short capitals ("AT&T", "S&L"), a
  // hyphen a quoted word and the next ("Broken"-era).
  if (word == "/" || (word == "&" && is_short_capitals(last) && is_short_capitals(next)) ||
      (word == "-" && text_.ends_with('"') && !open_.double_quote && is_word(next))) {
    attach_next_ = true;
    return false;
  }
  if (continues_number(text_, word) || continues_initials(text_, words.subspan(i))) return false;
  return space;
}

// An ellipsis between words stands apart (the training text writes
// "word ... word" 222 times in 392, "word... word" 91, "word...word" 72),
// after a capitalized word or a number it hugs the word before
// ("Gibson...", "1955..."), and after a sentence or a comma it stands apart
// (". ...", ", ..."); an ellipsis after one is spaced like it (157 of 185
// after one with no spaces).
bool RunningText::ellipsis_space(bool space, std::span<const std::string_view> ellipsis) {
  if (const std::optional<bool> spaced = spaced_like_last(text_, "...")) return space && *spaced;
  const std::string_view last = last_word(text_);
  const bool after_lowercase = !last.empty() && !is_capital(last[0]) && !is_digit(last[0]);
  const bool after_mark =
      !text_.empty() && std::string_view(".,!?").find(text_.back()) != std::string_view::npos;
  return space && (after_lowercase || after_mark) && ellipsis.size() > 3 && is_word(ellipsis[3]);
}

bool RunningText::after_ellipsis_space() const {
  // The text's ellipsis before the one it ends with, if it has one.
  // Not after an opening quote or bracket: "...radio frequency" (66 of 127).
  const size_t n = text_.size();
  if (n >= 4 && (text_[n - 4] == '(' || text_[n - 4] == '[' ||
                 (text_[n - 4] == '"' && (n == 4 || text_[n - 5] == ' '))))
    return false;
  if (n < 7) return true;
  const size_t at = text_.rfind("...", n - 7);
  if (at == std::string::npos) return true;
  return text_[at + 3] == ' ' || !is_word_byte(static_cast<unsigned char>(text_[at + 3]));
}

bool RunningText::double_quote_space(bool space, std::span<const std::string_view> after) {
  const std::string_view next = after.empty() ? "" : after.front();
  // A quote at the start or after an opening bracket opens, one before a
  // closing mark closes, whatever the count says (the text may have opened
  // one before it began, or never closed one); one after a word that comes
  // before a title opens, inside a quotation too.
  const bool opens =
      space && (is_word(next) || is_ellipsis(after)) && comes_before_quote(last_word(text_));
  if (space && !opens && (open_.double_quote || (closes(next) && !is_ellipsis(after)))) {
    (open_.inner_double_quote ? open_.inner_double_quote : open_.double_quote) = false;
    return false;
  }
  if (open_.double_quote && opens) open_.inner_double_quote = true;
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
