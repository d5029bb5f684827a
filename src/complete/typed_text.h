// What has been typed, read as a person typing it: the text before the word
// being typed (its context), and the start of that word (its prefix).
#pragma once

#include <string_view>

namespace nextword {

struct TypedText {
  std::string_view context;  // everything before the prefix
  std::string_view prefix;   // the start of the word being typed; empty between words
};

// The prefix is the run of letters and digits at the end of the text, with
// the apostrophes and hyphens inside or after them ("don'", "mom-and-d"); an
// apostrophe or hyphen before the run is punctuation and stays in the
// context ("'tis" quoted: "'" + "ti"). Text that ends in whitespace or in
// other punctuation ("time,", "said \"") has an empty prefix: the next word
// comes.
TypedText split_typed(std::string_view text);

// The end of `context` that the model reads: its last `words`
// whitespace-separated chunks. Each chunk is at least one token, so a model
// that reads at most `words` tokens sees the same tokens in it as in the
// whole context.
std::string_view context_tail(std::string_view context, int words);

}  // namespace nextword
