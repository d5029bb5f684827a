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
#include "kernel_family.h"
#include "stdin_pipe.h"

namespace {

const nextword::Model& fruit() {
  static const nextword::Model model =
      nextword::load_model(nextword::ModelPaths::in_directory(NEXTWORD_FRUIT_DIR));
  return model;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 60000) return -1;  // stdin must fit the pipe
  nextword::fuzz::use_kernel_family_of(size);
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

  const int stdin_fd = nextword::fuzz::pipe_holding(input);
  size_t records = 0;
  const nextword::cli::RecordSink sink{[&](const std::string& record) {
                                         ++records;
                                         if (options.format == Format::kJson)
                                           (void)nlohmann::json::parse(record);
                                       },
                                       [](const std::string&) {}};
  nextword::Predictor predictor(fruit());
  nextword::cli::LineReader reader(stdin_fd);
  const int status = nextword::cli::stream_records(fruit(), predictor, reader, options, sink);
  ::close(stdin_fd);

  const size_t lines = nextword::fuzz::line_count(input);
  if (records != lines || (status != 0 && status != 4)) __builtin_trap();
  return 0;
}
