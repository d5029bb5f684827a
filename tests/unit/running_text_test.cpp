// text/running_text.h: words written back as text the way people write it,
// each kind with worked examples, the cases that must stay apart, and the
// text reading as the same words again.
#include "text/running_text.h"

#include <catch2/catch.hpp>

#include "text/tokenizer.h"

using namespace nextword;
using Tokens = std::vector<std::string>;

namespace {

const TokenizerOptions kCased{false, true};

// `words` appended to `before`.
std::string text(std::string before, const Tokens& words) {
  append_as_text(before, words);
  return before;
}

// A line's words joined again, as `tokenize --join` writes them.
std::string rejoined(const std::string& line) { return text("", tokenize(line, kCased)); }

}  // namespace

TEST_CASE("words become running text: punctuation and quotes join naturally", "[running_text]") {
  CHECK(text("once upon a", {"time", ",", "there", "was", "a", "cat", "."}) ==
        "once upon a time, there was a cat.");
  CHECK(text("she said", {"\"", "hello", "!", "\"", "and", "left"}) ==
        "she said \"hello!\" and left");
  CHECK(text("she said \"", {"yes", ".", "\"", "then"}) == "she said \"yes.\" then");
  CHECK(text("", {"(", "a", ")", "b", "?"}) == "(a) b?");
  CHECK(text("it", {"'s", "fine", "\xE2\x80\xA6"}) == "it's fine\xE2\x80\xA6");
}

TEST_CASE("numbers keep their commas, decimals and colons", "[running_text]") {
  // The tokenizer cuts each of them into digits and marks.
  CHECK(tokenize("1,000,000", kCased) == Tokens{"1", ",", "000", ",", "000"});
  CHECK(text("", {"1", ",", "000", ",", "000"}) == "1,000,000");
  CHECK(text("sold", {"850", ",", "000", "copies"}) == "sold 850,000 copies");
  CHECK(text("", {"10", ",", "000-plus"}) == "10,000-plus");
  CHECK(text("", {"3", ".", "5", "times"}) == "3.5 times");
  CHECK(text("", {"0", ".", "050-inch"}) == "0.050-inch");
  CHECK(text("at", {"10", ":", "30", "and", "9", ":", "30PM"}) == "at 10:30 and 9:30PM");
  CHECK(text("", {"$", "900", ",", "000", "or", "50", ".", "6", "%"}) == "$900,000 or 50.6%");
  CHECK(text("", {"1991", "\xE2\x80\x93", "1992", ",", "2011", "\xE2\x80\x93", "present"}) ==
        "1991\xE2\x80\x93"
        "1992, 2011\xE2\x80\x93present");
  CHECK(text("married in", {"1918", ".", ":", "14", "Iris"}) == "married in 1918.:14 Iris");
}

TEST_CASE("numbers and sentences that must stay apart", "[running_text]") {
  // A group after a comma has three digits; a first group at most three.
  CHECK(text("", {"1", ",", "2", "and", "3"}) == "1, 2 and 3");
  CHECK(text("in", {"1990", ",", "200", "people"}) == "in 1990, 200 people");
  CHECK(text("", {"12", ",", "5000"}) == "12, 5000");
  // A sentence ending in a number, the next one starting with a word.
  CHECK(text("it closed in", {"1990", ".", "Then", "it", "opened", "."}) ==
        "it closed in 1990. Then it opened.");
  CHECK(text("", {"the", "Top", "10", ".", "A", "year", "later"}) == "the Top 10. A year later");
  // A colon before words, a dash between words.
  CHECK(text("", {"three", "kinds", ":", "red", "and", "blue"}) == "three kinds: red and blue");
  CHECK(text("", {"entities", "\xE2\x80\x93", "the", "Bloc"}) == "entities \xE2\x80\x93 the Bloc");
  CHECK(text("", {"his", "lesson", "-", "he", "would"}) == "his lesson - he would");
}

TEST_CASE("initials and abbreviations keep their periods", "[running_text]") {
  CHECK(text("the", {"U", ".", "S", ".", "Army"}) == "the U.S. Army");
  CHECK(text("", {"e", ".", "g", ".", "this", ",", "a", ".", "k", ".", "a", "."}) ==
        "e.g. this, a.k.a.");
  CHECK(text("in", {"Washington", ",", "D", ".", "C", ".", "and"}) == "in Washington, D.C. and");
  // One initial before a name, and a sentence after a lone letter, stay apart.
  CHECK(text("", {"George", "W", ".", "Bush"}) == "George W. Bush");
  CHECK(text("", {"World", "War", "I", ".", "I", "was"}) == "World War I. I was");
  CHECK(text("", {"plan", "B", ".", "A", "new", "plan"}) == "plan B. A new plan");
}

TEST_CASE("quotes and brackets hug their words", "[running_text]") {
  CHECK(text("", {"the", "\"", "Billboard", "\"", "200", "(", "1999", ")", "."}) ==
        "the \"Billboard\" 200 (1999).");
  CHECK(text("", {"(", "\"", "BART", "\"", ")"}) == "(\"BART\")");
  CHECK(text("", {"was", "on", "'", "Risk", "'", ",", "it", "sold"}) == "was on 'Risk', it sold");
  CHECK(text("", {"tom", "said", ",", "'", "yay", "!", "'", "he"}) == "tom said, 'yay!' he");
  CHECK(text("", {"Lang's", "'", "high", "culture", "'", "view"}) == "Lang's 'high culture' view");
  // A quote before a mark closes one that was opened before the text began.
  CHECK(text("", {"instead", "\"", ".", "frankie"}) == "instead\". frankie");
  // A possessive after a plural or a quoted title; a year's elision.
  CHECK(text("", {"the", "players", "'", "union"}) == "the players' union");
  CHECK(text("", {"Isis", "'", "quest", ".", "Isis", "'", "friend"}) ==
        "Isis' quest. Isis' friend");
  CHECK(text("", {"\"", "Buffy", "\"", "'", "s", "end"}) == "\"Buffy\"'s end");
  CHECK(text("", {"the", "class", "of", "'", "69"}) == "the class of '69");
  CHECK(text("", {"rate", "(", "s", ")", "of", "return"}) == "rate(s) of return");
}

TEST_CASE("contractions stay one word; slashes and em dashes hug", "[running_text]") {
  CHECK(tokenize("don't", kCased) == Tokens{"don't"});
  CHECK(text("", {"I", "don't", "know"}) == "I don't know");
  CHECK(text("", {"do", "n't", "go"}) == "don't go");  // WikiText's clitic
  CHECK(text("", {"and", "/", "or", "AC", "/", "DC"}) == "and/or AC/DC");
  CHECK(text("", {"characters", "\xE2\x80\x94", "a", "type"}) ==
        "characters\xE2\x80\x94"
        "a type");
  CHECK(text("", {"AT", "&", "T", "and", "Brave", "Words", "&", "Bloody"}) ==
        "AT&T and Brave Words & Bloody");
  CHECK(text("", {"the", "mid", "-", "to", "late-10th"}) == "the mid- to late-10th");
  CHECK(text("", {"C", "+", "+", "and", "US", "$", "25"}) == "C++ and US$25");
}

TEST_CASE("initials before a name are spaced, abbreviations are not", "[running_text]") {
  CHECK(text("writer", {"A", ".", "E", ".", "Hotchner", "and"}) == "writer A. E. Hotchner and");
  CHECK(text("", {"J", ".", "R", ".", "R", ".", "Tolkien"}) == "J. R. R. Tolkien");
  // A known abbreviation before a name, and initials before anything else.
  CHECK(text("", {"U", ".", "S", ".", "President", "and", "D", ".", "C", ".", "Police"}) ==
        "U.S. President and D.C. Police");
  CHECK(text("", {"the", "U", ".", "K", ".", "and", "A", ".", "B", ".", "C", "."}) ==
        "the U.K. and A.B.C.");
  // Nothing known after them yet: together.
  CHECK(text("", {"H", ".", "G", "."}) == "H.G.");
}

TEST_CASE("dashes and ellipses are spaced as the text spaces them", "[running_text]") {
  const std::string em = "\xE2\x80\x94";
  const std::string en = "\xE2\x80\x93";
  // An em dash hugs its words unless the text's last one is spaced.
  CHECK(text("systems " + em + " those", {"too", em, "and"}) ==
        "systems " + em + " those too " + em + " and");
  CHECK(text("systems" + em + "those", {"too", em, "and"}) ==
        "systems" + em + "those too" + em + "and");
  // Dates written in full stand apart; other numbers hug.
  CHECK(text("", {"(", "15", "July", "1919", en, "8", "February", "1999", ")"}) ==
        "(15 July 1919 " + en + " 8 February 1999)");
  CHECK(text("from", {"20", en, "25", "May", "(", "1893", en, "1909", ")"}) ==
        "from 20" + en + "25 May (1893" + en + "1909)");
  // Between words, an en dash follows the text's last one between words
  // (not between numbers), else hugs two names only.
  CHECK(text("Medicaid " + en + " less;", {"New", "York", en, "Albany"}) ==
        "Medicaid " + en + " less; New York " + en + " Albany");
  CHECK(text("a roentgenium" + en + "hydrogen bond", {"and", "spin", en, "orbit"}) ==
        "a roentgenium" + en + "hydrogen bond and spin" + en + "orbit");
  CHECK(text("in 1991" + en + "1992", {"spin", en, "orbit"}) ==
        "in 1991" + en + "1992 spin " + en + " orbit");
  // An ellipsis between words stands apart, hugs a name or a number before
  // it, a closing quote after it and the word after an opening quote.
  CHECK(text("", {"look", "at", "it", ".", ".", ".", "people", "will"}) ==
        "look at it ... people will");
  CHECK(text("", {"Gibson", ".", ".", ".", "swings"}) == "Gibson... swings");
  CHECK(text("", {"\"", "much", "of", "Asia", ".", ".", ".", "\"", "and"}) ==
        "\"much of Asia...\" and");
  CHECK(text("noted that", {"\"", ".", ".", ".", "in", "an", "interview", "\""}) ==
        "noted that \"...in an interview\"");
  CHECK(text("", {"legitimacy", ".", ".", ".", ".", "It", "is"}) == "legitimacy. ... It is");
  // A later one is spaced like the text's first.
  CHECK(text("saddle...the songs", {"have", "come", ".", ".", ".", "in", "droves"}) ==
        "saddle...the songs have come...in droves");
}

TEST_CASE("signs, oxidation states and a dropped word", "[running_text]") {
  CHECK(text("the states", {"+", "5", ",", "+", "3", "and", "about", "-", "55", "(", "~", "0", ".",
                            "86", ")"}) == "the states +5, +3 and about -55 (~0.86)");
  // Between numbers and after a capitalized word a sign stands apart.
  CHECK(text("", {"reigned", "871", "-", "899", "and", "TFR", "-", "5"}) ==
        "reigned 871 - 899 and TFR - 5");
  CHECK(text("", {"Tantalum", "(", "III", ")", "nitride", "and", "zinc", "(", "II", ")"}) ==
        "Tantalum(III) nitride and zinc(II)");
  CHECK(text("", {"Henry", "(", "1421", ")", ",", "(", "II", ")"}) == "Henry (1421), (II)");
  // The cleaned Wikipedia text leaves "the ." where it dropped a link.
  CHECK(text("", {"episodes", "of", "the", ".", "Then", "the", ",", "the", "end", "."}) ==
        "episodes of the . Then the , the end.");
}

TEST_CASE("titles quoted in a quotation, web addresses", "[running_text]") {
  CHECK(text("he said,", {"\"", "I", "loved", "the", "\"", "Flash", "Gordon", "\"", "serials", ".",
                          "\"", "Then"}) ==
        "he said, \"I loved the \"Flash Gordon\" serials.\" Then");
  CHECK(open_quotes("he said, \"I loved the \"Flash").inner_double_quote);
  CHECK_FALSE(open_quotes("he said, \"I loved the \"Flash\"").inner_double_quote);
  CHECK(text("by", {"Givingback", ".", "org", ".", "He", "wrote", "to", "www", ".", "positive", ".",
                    "com"}) == "by Givingback.org. He wrote to www.positive.com");
}

TEST_CASE("lines as people write them come back byte for byte", "[running_text]") {
  for (const std::string line : {
           "Risk is the eighth studio album by Megadeth, released on August 31, 1999 by Capitol.",
           "It had sold 850,000 copies (about 3.5 times more) by 10:30 p.m. in the U.S.",
           "Mustaine said, \"if anybody else's name was on 'Risk', it would have sold.\"",
           "The \"Billboard\" 200 chart; the RIAA (Recording Industry Association of America).",
           "Marketing reached 50.6% of voters (1,862 households), i.e. most of them.",
           "mum smiled, \"okay, here you go. just make sure there is water available first.\"",
           "bob wasn't scared. he asked the creature: \"what are you?\"",
       }) {
    CHECK(rejoined(line) == line);
  }
}

TEST_CASE("joined words read as the same words again", "[running_text]") {
  // A space is left out only where the tokenizer cuts anyway, so whatever the
  // rules decide the text reads back as its words: the marks around words
  // and numbers in every order.
  const Tokens pieces = {"1",
                         "000",
                         "U",
                         "S",
                         "a",
                         "word",
                         "'",
                         "\"",
                         ",",
                         ".",
                         ":",
                         "-",
                         "(",
                         ")",
                         "/",
                         "$",
                         "&",
                         "s",
                         "to",
                         "present",
                         "69",
                         "+",
                         "#",
                         "%",
                         "\xE2\x80\x93",
                         "\xE2\x80\x94",
                         "'s",
                         "Isis",
                         "May",
                         "the",
                         "E",
                         "Wells",
                         "com",
                         "www",
                         "~",
                         "II",
                         "\xE2\x80\xA6"};
  uint64_t state = 1;
  auto next = [&] {
    state = state * 6364136223846793005u + 1442695040888963407u;
    return static_cast<size_t>(state >> 33);
  };
  for (int round = 0; round < 2000; ++round) {
    Tokens words;
    for (size_t n = 1 + next() % 12; n > 0; --n) words.push_back(pieces[next() % pieces.size()]);
    if (std::find(words.begin(), words.end(), "'s") != words.end()) continue;  // WikiText's
    // Two words side by side are one word to the tokenizer only with a
    // space between them: read words from a text, as they come.
    const Tokens read = tokenize(join(words), kCased);
    INFO(join(read));
    CHECK(tokenize(text("", read), kCased) == read);
  }
}

TEST_CASE("the quotes a text leaves open", "[running_text]") {
  CHECK_FALSE(open_quotes("she said \"hi\" and").double_quote);
  CHECK(open_quotes("she said \"hi").double_quote);
  CHECK(open_quotes("the concept of 'attention").single_quote);
  CHECK_FALSE(open_quotes("the players' union").single_quote);
  CHECK(text("the concept of 'attention", {"'", ")"}) == "the concept of 'attention')");
}

TEST_CASE("generated sentences start with a capital, and so does I", "[running_text]") {
  std::string text = "she smiled.";
  const size_t from = text.size();
  text += " then i said, \"yes! i'm here.\" the end? maybe. it is fine";
  capitalize_sentences(text, from);
  CHECK(text == "she smiled. Then I said, \"Yes! I'm here.\" The end? Maybe. It is fine");
  std::string kept = "e.g. this";  // before `from`, nothing changes
  capitalize_sentences(kept, kept.size());
  CHECK(kept == "e.g. this");
  std::string whole = "once upon a time. the end";  // a text of its own starts a sentence
  capitalize_sentences(whole, 0);
  CHECK(whole == "Once upon a time. The end");
}
