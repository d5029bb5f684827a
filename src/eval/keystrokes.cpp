#include "eval/keystrokes.h"

#include <chrono>
#include <string>

#include "text/words.h"

namespace nextword {
namespace {

// A token as typed: [lead | word | trail], the word from the first to the
// last letter or digit (empty when it has none).
struct Token {
  std::string_view lead, word, trail;
};

Token split_token(std::string_view token) {
  size_t first = token.size(), last_end = token.size();
  for (size_t i = 0, n = 0; i < token.size(); i += n) {
    if (is_letter_or_digit(code_point_at(token, i, &n))) {
      if (first == token.size()) first = i;
      last_end = i + n;
    }
  }
  if (first == token.size()) return {token, {}, {}};
  return {token.substr(0, first), token.substr(first, last_end - first), token.substr(last_end)};
}

bool offered(const Completion& c, const std::string& key) {
  for (const Suggestion& s : c.suggestions) {
    if (lowercase(s.word) == key) return true;
  }
  return false;
}

}  // namespace

KeystrokeCount simulate_typing(std::string_view text, Completer& completer,
                               const std::function<void(double)>& on_query) {
  KeystrokeCount count;
  std::string typed;
  auto ask = [&]() {
    ++count.queries;
    const auto start = std::chrono::steady_clock::now();
    Completion c = completer.complete(typed);
    if (on_query) {
      on_query(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return c;
  };
  for (size_t i = 0; i < text.size();) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size()) break;
    const size_t start = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    const std::string_view token = text.substr(start, i - start);
    const Token t = split_token(token);
    count.kn += static_cast<int64_t>(code_point_count(token)) + 1;

    if (!typed.empty()) typed += ' ';
    typed += t.lead;
    count.ki += static_cast<int64_t>(code_point_count(t.lead));
    bool selected = false;
    if (!t.word.empty()) {
      ++count.words;
      const std::string key = lowercase(t.word);
      size_t done = 0;  // bytes of the word typed
      while (done < t.word.size()) {
        if (offered(ask(), key)) {
          selected = true;
          break;
        }
        size_t n = 0;
        code_point_at(t.word, done, &n);
        typed += t.word.substr(done, n);
        done += n;
        ++count.ki;
      }
      if (selected) {
        ++count.ks;
        ++count.selected;
        typed += t.word.substr(done);
      }
    }
    typed += t.trail;
    count.ki += static_cast<int64_t>(code_point_count(t.trail));
    // The space after the token: typed, unless a selection brought it.
    if (!(selected && t.trail.empty())) ++count.ki;
  }
  return count;
}

}  // namespace nextword
