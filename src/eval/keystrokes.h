// Keystroke savings: a person typing a text with a completer's suggestions
// (`eval --ksr`, presage's measure; docs/usage.md, "Your own writing", has
// figures).
//
// The text is split on whitespace into tokens, each leading punctuation +
// a word + trailing punctuation (the word runs from the token's first to its
// last letter or digit). Punctuation is always typed. Before the word's first
// character and after each typed character the completer gets the text typed
// so far; when the word is among its suggestions (ignoring case only:
// "it's" is not "it’s", text/words.h lowercase) one
// keystroke selects it, and a space follows by itself unless punctuation
// follows; otherwise the whole word and then a space are typed.
//
//   kn = every character of the text + one space per token
//   KSR = 1 - (ki + ks) / kn       (ki: characters typed, ks: selections)
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "complete/completer.h"

namespace nextword {

struct KeystrokeCount {
  int64_t ki = 0;        // keystrokes typing characters (spaces included)
  int64_t ks = 0;        // keystrokes selecting a suggestion
  int64_t kn = 0;        // keystrokes without suggestions
  int64_t words = 0;     // tokens that hold a word
  int64_t selected = 0;  // ... of which were selected (= ks)
  int64_t queries = 0;   // times the completer was asked

  double ksr() const {
    return kn == 0 ? 0 : 1.0 - static_cast<double>(ki + ks) / static_cast<double>(kn);
  }
};

// Types `text` with `completer` (one typing session); `on_query(seconds)`,
// when given, gets how long each call of the completer took.
KeystrokeCount simulate_typing(std::string_view text, Completer& completer,
                               const std::function<void(double)>& on_query = {});

}  // namespace nextword
