// The lexicon: every word of a model's training text with its count, those
// outside the vocabulary included (lexicon.tsv, optional beside vocab.json;
// data/FORMAT.md, "The lexicon"). Completion offers its out-of-vocabulary
// words when the vocabulary has too few words that fit what is typed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nextword {

struct LexiconEntry {
  std::string word;
  int64_t count = 0;
};

struct Lexicon {
  // Most frequent first; equal counts in byte order of the words.
  std::vector<LexiconEntry> entries;
};

// The largest lexicon.tsv read (a few million words fit).
constexpr int64_t kMaxLexiconBytes = int64_t{256} << 20;

// Sorts entries into the lexicon's order.
void sort_lexicon(Lexicon& lexicon);

// Whether read_lexicon accepts `word`: valid UTF-8, not empty, without
// whitespace or control characters (a text's DEL byte is a word to the
// tokenizer, not to lexicon.tsv).
bool is_lexicon_word(std::string_view word);

// Reads lexicon.tsv. Throws model_error("FILE:LINE", ...) on the first line
// that breaks the format, and when the file is missing or too large.
Lexicon read_lexicon(const std::string& path);
// The lexicon.tsv beside a model's vocab.json, when there is one (the
// default lexicon of `complete`, `type` and `serve`).
std::optional<Lexicon> read_lexicon_beside(const std::string& vocab_path);
// The same rules on bytes in memory, named `path` in messages.
Lexicon parse_lexicon(const std::string& path, std::string_view text);

// lexicon.tsv's bytes: one "WORD<TAB>COUNT\n" line per entry, in order.
std::string format_lexicon(const Lexicon& lexicon);

}  // namespace nextword
