// The WikiText benchmark (eval/wikitext.h): lines made plain text, <unk>
// kept apart and unscored, heading marks dropped, the counts of the
// protocol's N, and, where the validation file is at hand, its figures.
#include "eval/wikitext.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "text/documents.h"

using namespace nextword;

namespace {

using Words = std::vector<std::string>;

const TokenizerOptions kCased{false, true};

// The document's tokens with the unscored ones in brackets.
Words marked(const WikitextDocument& document) {
  Words out;
  for (size_t i = 0; i < document.tokens.size(); ++i)
    out.push_back(document.scored[i] ? document.tokens[i] : "[" + document.tokens[i] + "]");
  return out;
}

Words one_line(const std::string& line) {
  const Wikitext text = read_wikitext(line, kCased, "<unk>");
  REQUIRE(text.documents.size() == 1);
  return marked(text.documents[0]);
}

}  // namespace

TEST_CASE("a line of WikiText becomes plain text", "[wikitext]") {
  // Headings lose their marks, whatever their depth.
  CHECK(wikitext_line_text(" = Homarus gammarus = ") == "Homarus gammarus");
  CHECK(wikitext_line_text(" = = = Early life = = = \r") == "Early life");
  // @-@ @,@ @.@ join without spaces.
  CHECK(wikitext_line_text(" a well @-@ known 1 @,@ 000 km , 0 @.@ 7 kg ") ==
        "a well-known 1,000 km, 0.7 kg");
  // Clitics attach, in both of WikiText's spellings of n't, and in names.
  CHECK(wikitext_line_text(" John 's dog do n't , I don 't , we 're O 'Neil d 'état Carré 's ") ==
        "John's dog don't, I don't, we're O'Neil d'état Carré's");
  // A lone ' is a plural's possessive or a quote (text/running_text.h).
  CHECK(wikitext_line_text(" the lobsters ' claws , called ' heel ' ") ==
        "the lobsters' claws, called 'heel'");
  // Brackets, marks and double quotes.
  CHECK(wikitext_line_text(" It is 60 cm ( 24 in ) ; only \" lobster red \" on cooking ! 5 % ") ==
        "It is 60 cm (24 in); only \"lobster red\" on cooking! 5%");
  CHECK(wikitext_line_text(" \" a \" and \" b \" ") == "\"a\" and \"b\"");
  // <unk> is a word like any other here.
  CHECK(wikitext_line_text(" the <unk> 's tail ") == "the <unk>'s tail");
  CHECK(wikitext_line_text("") == "");
  CHECK(wikitext_line_text("   ") == "");
}

TEST_CASE("<unk> splits the line and is context only", "[wikitext]") {
  // In the middle: the words around it never fuse with it.
  CHECK(one_line(" a well @-@ known <unk> of Mars \n") ==
        Words{"a", "well-known", "[<unk>]", "of", "Mars"});
  // At the start, twice in a row, and at the end.
  CHECK(one_line(" <unk> <unk> is here <unk> ") ==
        Words{"[<unk>]", "[<unk>]", "is", "here", "[<unk>]"});
  // Next to a clitic or a hyphen: the piece after it starts with the mark.
  CHECK(one_line(" the <unk> 's tail , <unk> @-@ based ") ==
        Words{"the", "[<unk>]", "'", "s", "tail", ",", "[<unk>]", "-", "based"});
  CHECK(one_line(" anti @-@ <unk> do n't ") == Words{"anti", "-", "[<unk>]", "don't"});
  // Numbers are joined, then split by the tokenizer's own rule.
  CHECK(one_line(" 1 @,@ 000 and 0 @.@ 7 ") == Words{"1", ",", "000", "and", "0", ".", "7"});
  // Quotes keep their pairing across the pieces.
  CHECK(one_line(" \" <unk> \" is it ") == Words{"\"", "[<unk>]", "\"", "is", "it"});
  // The model's own unk token and lowercase.
  const Wikitext lower = read_wikitext(" The <unk> 's ", TokenizerOptions{}, "<UNK>");
  REQUIRE(lower.documents.size() == 1);
  CHECK(marked(lower.documents[0]) == Words{"the", "[<UNK>]", "'", "s"});
}

TEST_CASE("articles start at titles and the counts give N", "[wikitext]") {
  const std::string file =
      " \n"
      " = Homarus gammarus = \n"
      " \n"
      " Homarus gammarus , known as the <unk> lobster , is a species . \n"
      " \n"
      " = = Description = = \n"
      " It 's 0 @.@ 7 kg . \n"
      " = = = Eggs = = = \n"
      " \n"
      " = <unk> Bay = \n"
      " It is n't a bay . \n";
  const Wikitext text = read_wikitext(file, kCased, "<unk>");
  REQUIRE(text.documents.size() == 2);
  CHECK(marked(text.documents[0]) ==
        Words{"Homarus", "gammarus", "Homarus", "gammarus", ",",  "known",   "as",  "the",
              "[<unk>]", "lobster",  ",",       "is",       "a",  "species", ".",   "Description",
              "It's",    "0",        ".",       "7",        "kg", ".",       "Eggs"});
  CHECK(marked(text.documents[1]) == Words{"[<unk>]", "Bay", "It", "isn't", "a", "bay", "."});
  CHECK(text.wikitext_tokens == 4 + 13 + 5 + 7 + 7 + 4 + 6);
  CHECK(text.unknown == 2);
  CHECK(text.heading_marks == 2 + 4 + 6 + 2);
  CHECK(text.scored() == 46 - 2 - 14);
  // The model reads two words fewer: `It 's` and `is n't` are one word each.
  size_t model_scored = 0;
  for (const WikitextDocument& document : text.documents)
    for (const char scored : document.scored) model_scored += scored ? 1 : 0;
  CHECK(model_scored == 28);

  // Text before the first title is a document of its own; no final newline needed.
  const Wikitext headless = read_wikitext("a b\n\n = T = \nc", kCased, "<unk>");
  REQUIRE(headless.documents.size() == 2);
  CHECK(headless.documents[0].tokens == Words{"a", "b"});
  CHECK(headless.documents[1].tokens == Words{"T", "c"});
  CHECK(headless.scored() == 4);
  CHECK(read_wikitext("", kCased, "<unk>").documents.empty());
  CHECK(read_wikitext(" \n \n", kCased, "<unk>").documents.empty());
}

TEST_CASE("the WikiText-103 validation split gives the protocol's N", "[wikitext][shared]") {
  const std::filesystem::path path = std::filesystem::path(NEXTWORD_DATA_DIR).parent_path() /
                                     "../shared/corpus/wikitext103-valid.tokens";
  // ../shared's corpus, never in the repository: the case is tagged [shared]
  // (tests/CMakeLists.txt runs it only where it is at hand).
  REQUIRE(std::filesystem::exists(path));
  SECTION("validation counts") {
    const Wikitext text = read_wikitext(read_text_file(path.string()), kCased, "<unk>");
    CHECK(text.wikitext_tokens == 213886);
    CHECK(text.unknown == 1657);
    CHECK(text.heading_marks == 2924);
    CHECK(text.scored() == 209305);
    int64_t scored = 0, unscored = 0;
    for (const WikitextDocument& document : text.documents) {
      REQUIRE(document.scored.size() == document.tokens.size());
      for (const char s : document.scored) (s ? scored : unscored) += 1;
    }
    CHECK(text.documents.size() == 60);
    CHECK(unscored == 1657);
    // Clitics and hyphens join words, numbers' marks split them: near N.
    CHECK(scored > 200000);
    CHECK(scored < 215000);
    WARN("WikiText-103 validation: " << text.documents.size() << " documents, " << scored
                                     << " model tokens scored, " << unscored << " unscored");
  }
}
