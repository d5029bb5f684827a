// libFuzzer: the stdin record path end to end (line reader, tokenizer,
// batched prediction, records) with the hand-written fruit model. The first
// byte picks the options; the rest is stdin. Exactly one record comes out per
// input line, every JSON record parses, and nothing but input errors occurs.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "cli/line_reader.h"
#include "cli/record_stream.h"

namespace {

const nextword::Model& fruit() {
  static const nextword::Model model =
      nextword::load_model(nextword::ModelPaths::in_directory(NEXTWORD_FRUIT_DIR));
  return model;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 60000) return -1;  // stdin must fit the pipe
  using nextword::cli::Format;
  nextword::cli::RecordOptions options;
  options.format = data[0] % 3 == 0   ? Format::kText
                   : data[0] % 3 == 1 ? Format::kTsv
                                      : Format::kJson;
  options.attention = (data[0] & 0x08) != 0;
  if (options.attention) options.format = Format::kJson;
  options.batch = 1 + (data[0] >> 4);
  options.top_k = 1 + (data[0] & 0x07);
  const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);

  int fds[2];
  if (::pipe(fds) != 0) __builtin_trap();
  if (::write(fds[1], input.data(), input.size()) != static_cast<ssize_t>(input.size())) {
    __builtin_trap();
  }
  ::close(fds[1]);
  size_t records = 0;
  const nextword::cli::RecordSink sink{[&](const std::string& record) {
                                         ++records;
                                         if (options.format == Format::kJson)
                                           (void)nlohmann::json::parse(record);
                                       },
                                       [](const std::string&) {}};
  nextword::Predictor predictor(fruit());
  nextword::cli::LineReader reader(fds[0]);
  const int status = nextword::cli::stream_records(fruit(), predictor, reader, options, sink);
  ::close(fds[0]);

  size_t lines = 0;
  for (const char c : input) lines += c == '\n' ? 1 : 0;
  if (!input.empty() && input.back() != '\n') ++lines;
  if (records != lines || (status != 0 && status != 4)) __builtin_trap();
  return 0;
}
