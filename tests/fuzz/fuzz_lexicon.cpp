// libFuzzer: any bytes as lexicon.tsv give a lexicon that writes back to
// lines the reader takes again, unchanged, or a model error naming a line.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "model/lexicon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const nextword::Lexicon lexicon = nextword::parse_lexicon("lexicon.tsv", text);
    const nextword::Lexicon again =
        nextword::parse_lexicon("again", nextword::format_lexicon(lexicon));
    if (again.entries.size() != lexicon.entries.size()) __builtin_trap();
    for (size_t i = 0; i < lexicon.entries.size(); ++i) {
      const nextword::LexiconEntry &a = lexicon.entries[i], &b = again.entries[i];
      if (a.word != b.word || a.count != b.count || a.count < 1) __builtin_trap();
      if (i > 0 && lexicon.entries[i - 1].count < a.count) __builtin_trap();
    }
  } catch (const nextword::Error& e) {
    if (e.code() != nextword::ExitCode::kModel || e.message().rfind("lexicon.tsv:", 0) != 0) {
      __builtin_trap();
    }
  }
  return 0;
}
