#include "eval/wikitext.h"

#include <cstddef>
#include <span>

#include "text/running_text.h"
#include "text/tokenizer.h"
#include "text/words.h"

namespace nextword {
namespace {

// A line's whitespace tokens, less the `=` marks when it is a heading.
struct Line {
  std::vector<std::string_view> words;
  size_t level = 0;  // 1 for an article's title, 2 for a section, ...; 0 for a paragraph
  size_t marks = 0;  // the `=` dropped
};

Line read_line(std::string_view text) {
  Line line;
  for (size_t i = 0; i < text.size();) {
    if (is_space(text[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && !is_space(text[end])) ++end;
    line.words.push_back(text.substr(i, end - i));
    i = end;
  }
  std::vector<std::string_view>& words = line.words;
  if (words.size() >= 2 && words.front() == "=" && words.back() == "=") {
    size_t lead = 0;
    while (lead < words.size() && words[lead] == "=") ++lead;
    size_t trail = 0;
    while (lead + trail < words.size() && words[words.size() - 1 - trail] == "=") ++trail;
    line.level = lead;
    line.marks = lead + trail;
    words.erase(words.end() - static_cast<std::ptrdiff_t>(trail), words.end());
    words.erase(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(lead));
  }
  return line;
}

// Appends WikiText words to `text` as running text (RunningText's rules;
// `@-@`, `@,@` and `@.@` join their neighbours). `open` carries the quotes
// left open from one piece of a line to the next.
void append_words(std::string& text, std::span<const std::string_view> words, OpenQuotes& open) {
  RunningText running(text, open);
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string_view word = words[i];
    if (word == "@-@" || word == "@,@" || word == "@.@") {
      text += word[1];
      running.attach_next();
    } else {
      running.append(words, i);
    }
  }
  open = running.open_quotes();
}
}  // namespace

int64_t Wikitext::scored() const { return wikitext_tokens - unknown - heading_marks; }

std::string wikitext_line_text(std::string_view line) {
  const Line words = read_line(line);
  std::string text;
  OpenQuotes open;
  append_words(text, words.words, open);
  return text;
}

Wikitext read_wikitext(std::string_view text, const TokenizerOptions& options,
                       const std::string& unk_token) {
  Wikitext out;
  WikitextDocument current;
  auto finish = [&] {
    if (!current.tokens.empty()) out.documents.push_back(std::move(current));
    current = {};
  };
  auto add = [&](std::string token, bool scored) {
    current.tokens.push_back(std::move(token));
    current.scored.push_back(scored ? 1 : 0);
  };
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const Line line = read_line(text.substr(start, end - start));
    start = end + 1;
    out.wikitext_tokens += static_cast<int64_t>(line.words.size() + line.marks);
    out.heading_marks += static_cast<int64_t>(line.marks);
    if (line.level == 1) finish();
    // The text between <unk>s is tokenized piece by piece: a <unk> written
    // into the text would fuse with a clitic or hyphen beside it (`<unk>'s`)
    // and the tokenizer would cut `<unk>` itself into marks and a word.
    const std::span<const std::string_view> words(line.words);
    OpenQuotes open;
    size_t piece = 0;
    for (size_t i = 0; i <= words.size(); ++i) {
      if (i < words.size() && words[i] != "<unk>") continue;
      std::string piece_text;
      append_words(piece_text, words.subspan(piece, i - piece), open);
      for (std::string& token : tokenize(piece_text, options)) add(std::move(token), true);
      if (i < words.size()) {
        ++out.unknown;
        add(unk_token, false);
      }
      piece = i + 1;
    }
  }
  finish();
  return out;
}

}  // namespace nextword
