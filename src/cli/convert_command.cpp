// nextword convert: a weights file from one form to another (weights.json
// with numbers or base64 tensors, weights.safetensors), losslessly; or, with
// --dtype f16|bf16, a safetensors file of 16-bit floats rounded to nearest
// even, half the size; or, with --tokenizer, a llama2.c checkpoint and its
// tokenizer.bin into a model directory (model/llama2c.h).
#include <filesystem>
#include <memory>

#include "base/error.h"
#include "base/file_output.h"
#include "cli/commands.h"
#include "model/llama2c.h"
#include "model/model_writer.h"
#include "model/weights_file.h"

namespace nextword::cli {
namespace {

TensorDtype dtype_of(const std::string& name) {
  return name == "f16"    ? TensorDtype::kF16
         : name == "bf16" ? TensorDtype::kBF16
                          : TensorDtype::kF32;
}

struct ConvertCommand {
  std::string input, output, tokenizer;
  bool numbers = false;
  std::string dtype = "f32";

  void add_to(CLI::App& c) {
    c.add_option("input", input,
                 "weights.json or weights.safetensors to read, or a llama2.c checkpoint "
                 "(with --tokenizer)")
        ->required();
    c.add_option("output", output,
                 "File to write: safetensors when its name ends in .safetensors, else JSON; "
                 "with --tokenizer, the model directory to write")
        ->required();
    c.add_option("--tokenizer", tokenizer,
                 "The llama2.c tokenizer.bin of a llama2.c checkpoint given as input: writes "
                 "OUTPUT/vocab.json and OUTPUT/weights.safetensors");
    c.add_flag("--numbers", numbers,
               "JSON tensors as lists of numbers (shortest round-trip decimals) instead of "
               "base64 float32");
    c.add_option("--dtype", dtype,
                 "Floats of safetensors output: f32 (lossless, the default), f16 (IEEE half) or "
                 "bf16 (bfloat16), both rounded to nearest even: half the bytes")
        ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  }

  int run() const {
    if (!tokenizer.empty()) return import_checkpoint();
    if (input.ends_with(".bin")) {
      throw Error(ExitCode::kUsage,
                  input +
                      " looks like a llama2.c checkpoint: give its --tokenizer tokenizer.bin "
                      "and a model directory to write");
    }
    WeightsFormat format = format_of_path(output);
    if (format == WeightsFormat::kSafetensors && numbers) {
      throw Error(ExitCode::kUsage, "--numbers is for JSON output, not " + output);
    }
    if (format != WeightsFormat::kSafetensors && dtype != "f32") {
      throw Error(ExitCode::kUsage, "--dtype " + dtype + " is for .safetensors output, not " +
                                        output + " (weights.json is always float32)");
    }
    if (numbers) format = WeightsFormat::kJsonNumbers;
    const WeightsFile in = read_weights(input);
    std::string bytes;
    if (format == WeightsFormat::kSafetensors) {
      try {
        bytes = weights_safetensors(in.config, in.weights, dtype_of(dtype));
      } catch (const Error& e) {  // a value beyond the half's range: name the file it is in
        throw Error(e.code(), input + ": " + e.message());
      }
    } else {
      bytes = encode_weights(in.config, in.weights, format);
    }
    write_file_atomically(output, bytes);
    return 0;
  }

  int import_checkpoint() const {
    if (numbers) throw Error(ExitCode::kUsage, "--numbers is for weights.json output");
    const Model model = import_llama2c(input, tokenizer);
    std::error_code ec;
    std::filesystem::create_directories(output, ec);
    if (ec) throw Error(ExitCode::kIo, output + ": cannot create the directory: " + ec.message());
    const ModelPaths paths{output + "/vocab.json", output + "/weights.safetensors", ""};
    write_file_atomically(paths.vocab, vocab_json(model.vocab));
    write_file_atomically(paths.weights,
                          weights_safetensors(model.config, model.weights, dtype_of(dtype)));
    return 0;
  }
};

}  // namespace

CLI::App* add_convert_command(CLI::App& app, std::function<int()>& run) {
  return add_command<ConvertCommand>(
      app, "convert",
      "Convert weights between weights.json (numbers or base64) and safetensors (float32, or "
      "16-bit floats with --dtype)",
      run);
}

}  // namespace nextword::cli
