// Reading the WikiText benchmark (WikiText-103's *.tokens files) into
// documents of the model's words, each marked scored or not.
//
// WikiText is tokenized text: a line ` = Title = ` starts an article,
// ` = = Section = = ` (and deeper) is a heading, other lines are paragraphs.
// `@-@`, `@,@` and `@.@` stand for a hyphen, comma or point inside a word or
// number, clitics are split off (`John 's`, `do n't`) and `<unk>` stands for
// a rare word. A model is scored on every whitespace token but `<unk>` (kept
// as context) and the `=` of headings; its perplexity is exp(total -log p of
// the scored text / N), N the number of scored WikiText tokens, whatever the
// model's own tokenizer makes of the text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer.h"

namespace nextword {

// One article, from its ` = Title = ` line (or the text before the first title).
struct WikitextDocument {
  std::vector<std::string> tokens;  // the model tokenizer's words
  std::vector<char> scored;         // per token: 1 scored, 0 context only (the unk_token)
};

struct Wikitext {
  std::vector<WikitextDocument> documents;
  int64_t wikitext_tokens = 0;  // whitespace tokens of the file
  int64_t unknown = 0;          // of which <unk>
  int64_t heading_marks = 0;    // of which = of headings
  // N: the WikiText tokens scored, wikitext_tokens - unknown - heading_marks.
  int64_t scored() const;
};

// Reads WikiText's tokenized form. Each line is made plain text
// (wikitext_line_text) and split by the model's tokenizer; a <unk> becomes
// `unk_token`, never joined to its neighbours, and not scored.
Wikitext read_wikitext(std::string_view text, const TokenizerOptions& options,
                       const std::string& unk_token);

// One line of WikiText as plain text: heading marks dropped, @-@ @,@ @.@
// joined, the other words as running text (text/running_text.h: clitics
// attached, no space before , . ; : ! ? ) ] } %, none after ( [ {, quotes
// pairing as opening/closing).
std::string wikitext_line_text(std::string_view line);

}  // namespace nextword
