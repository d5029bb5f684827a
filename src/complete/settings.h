// The completer's options under the names a person gives them: one table,
// read by the command line (-k, --learn, ... of complete, type, eval --ksr
// and lsp) and by `nextword lsp`'s settings from the editor
// ("top-k", "learn", ...), so that a name, its range and its help are
// written once.
#pragma once

#include <string>

#include "complete/completer.h"

namespace nextword {

// Calls, for each option of `o` in the order `--help` lists them,
//   visitor.whole(flags, key, int& value, low, high, help)
//   visitor.flag(flags, key, bool& value, help)
//   visitor.number(flags, key, double& value, low, high, help)
// `flags`: the command line's names ("-k,--top-k"); `key`: the long name
// without its dashes ("top-k"), the settings' key.
template <typename Options, typename Visitor>
void visit_complete_options(Options& o, Visitor&& visitor) {
  visitor.whole("-k,--top-k", "top-k", o.k, 1, 1 << 16, "How many suggestions, at most");
  visitor.flag("--no-repeat", "no-repeat", o.no_repeat,
               "A word offered for the word being typed is not offered again at its next "
               "keystrokes (in the same spelling)");
  visitor.flag("--learn", "learn", o.learn,
               "Adapt to the writer: mix in caches of the words written so far and of the "
               "contexts they followed");
  visitor.number("--learn-weight", "learn-weight", o.lambda, 0, 1,
                 "With --learn: lambda, the word cache's share of each probability");
  visitor.number("--learn-decay", "learn-decay", o.decay, 0, 1,
                 "With --learn: how much a word's use counts less for each word written after it");
  visitor.number("--learn-context-weight", "learn-context-weight", o.context_weight, 0, 1,
                 "With --learn: mu, the context cache's share of each probability");
  visitor.number("--learn-context-sharpness", "learn-context-sharpness", o.context_theta, 0, 1000,
                 "With --learn: theta, how much more the context cache counts a closer context");
  visitor.number("--learn-temperature", "learn-temperature", o.model_temperature, 0.05, 100,
                 "With --learn: T, the model's logits are divided by T before the caches are "
                 "mixed in");
}

// What is wrong with options each in its range, or "" (lambda + mu over 1
// would leave the model a negative share); names start with `dashes` ("--"
// on the command line, "" in settings).
std::string complete_options_problem(const CompleteOptions& o, const std::string& dashes);

}  // namespace nextword
