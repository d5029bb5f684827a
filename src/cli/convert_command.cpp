// nextword convert: a weights file from one form to another, losslessly
// (weights.json with numbers or base64 tensors, weights.safetensors).
#include <memory>

#include "base/error.h"
#include "base/file_output.h"
#include "cli/commands.h"
#include "model/weights_file.h"

namespace nextword::cli {
namespace {

struct ConvertCommand {
  std::string input, output;
  bool numbers = false;

  void add_to(CLI::App& c) {
    c.add_option("input", input, "weights.json or weights.safetensors to read")->required();
    c.add_option("output", output,
                 "File to write: safetensors when its name ends in .safetensors, else JSON")
        ->required();
    c.add_flag("--numbers", numbers,
               "JSON tensors as lists of numbers (shortest round-trip decimals) instead of "
               "base64 float32");
  }

  int run() const {
    WeightsFormat format = format_of_path(output);
    if (format == WeightsFormat::kSafetensors && numbers) {
      throw Error(ExitCode::kUsage, "--numbers is for JSON output, not " + output);
    }
    if (numbers) format = WeightsFormat::kJsonNumbers;
    const WeightsFile in = read_weights(input);
    write_file_atomically(output, encode_weights(in.config, in.weights, format));
    return 0;
  }
};

}  // namespace

CLI::App* add_convert_command(CLI::App& app, std::function<int()>& run) {
  return add_command<ConvertCommand>(
      app, "convert", "Convert weights between weights.json (numbers or base64) and safetensors",
      run);
}

}  // namespace nextword::cli
