// libFuzzer: the `complete` stream end to end (line reader, typed-text split,
// completer with a lexicon and the cache, records) on the hand-written fruit
// model. The first byte picks the options; the rest is stdin. Exactly one
// record comes out per input line, every JSON record parses, and every
// suggestion fits the typed prefix, at most k of them, none twice.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli/completion.h"
#include "kernel_family.h"
#include "stdin_pipe.h"
#include "text/words.h"

namespace {

const nextword::Model& fruit() {
  static const nextword::Model model =
      nextword::load_model(nextword::ModelPaths::in_directory(NEXTWORD_FRUIT_DIR));
  return model;
}

const nextword::LexiconIndex& lexicon() {
  static const nextword::LexiconIndex l = nextword::LexiconIndex::build(
      nextword::parse_lexicon("lexicon.tsv", "pear\t3\npeach\t2\nPie\t1\n\xC3\xA9t\xC3\xA9\t1\n"),
      nextword::LexiconIndexSource::of(fruit()));
  return l;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 60000) return -1;  // stdin must fit the pipe
  nextword::fuzz::use_kernel_family_of(size);
  using nextword::cli::Format;
  nextword::CompleteOptions options;
  options.k = 1 + (data[0] & 0x07);
  options.no_repeat = (data[0] & 0x08) != 0;
  options.learn = (data[0] & 0x10) != 0;
  const Format format = (data[0] & 0x20) != 0 ? Format::kJson : Format::kTsv;
  const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);

  const int stdin_fd = nextword::fuzz::pipe_holding(input);
  size_t records = 0;
  const nextword::cli::RecordSink sink{
      [&](const std::string& record) {
        ++records;
        if (format != Format::kJson) return;
        const nlohmann::json j = nlohmann::json::parse(record);
        const std::string prefix = nextword::fold_case(j.at("prefix").get<std::string>());
        const auto& suggestions = j.at("suggestions");
        if (suggestions.size() > static_cast<size_t>(options.k)) __builtin_trap();
        std::set<std::string> seen;
        for (const auto& s : suggestions) {
          const std::string word = nextword::fold_case(s.at("word").get<std::string>());
          if (word.rfind(prefix, 0) != 0 || !seen.insert(word).second) __builtin_trap();
          if (!(s.at("probability").get<double>() >= 0)) __builtin_trap();
        }
      },
      [](const std::string&) {}};
  nextword::Completer completer(fruit(), &lexicon(), options);
  nextword::cli::LineReader reader(stdin_fd);
  nextword::cli::stream_completions(completer, reader, format, true, 1 + (data[0] >> 6) * 20, sink);
  ::close(stdin_fd);

  const size_t lines = nextword::fuzz::line_count(input);
  if (records != lines) __builtin_trap();
  return 0;
}
