// What a person can set for `nextword lsp`, on its command line or from the
// editor (initializationOptions, workspace/didChangeConfiguration), under
// the same names as the command's flags: {"top-k": 3, "learn": true,
// "languages": ["markdown"], "trigger-characters": " ", "history": FILE}.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "complete/completer.h"

namespace nextword::lsp {

struct Settings {
  CompleteOptions complete;
  // The languageIds suggestions are made in ("*": every one).
  std::vector<std::string> languages = {"plaintext", "markdown", "gitcommit", "text", "mail"};
  // Characters that ask for suggestions as they are typed, besides letters
  // (" ": the next word is suggested before its first letter). Fixed at
  // initialize: the editor learns them once.
  std::string trigger_characters;
  // A history file: learned by every document's completer (implies
  // learn), and each saved document's new lines are appended to it.
  std::string history;

  bool enabled_for(const std::string& language) const;
};

// "a,b, c" -> {"a", "b", "c"} (empty items dropped).
std::vector<std::string> split_list(const std::string& list);

// Applies the settings in `object` ({"nextword": {...}} or {...}) to
// `settings`: each valid one is applied, and each invalid one is a line of
// the result, "WHERE.KEY: what" (`where`: "initializationOptions", ...).
// Options that are fine one by one but not together are not applied.
std::vector<std::string> apply_settings(const nlohmann::json& object, const std::string& where,
                                        Settings& settings);

}  // namespace nextword::lsp
