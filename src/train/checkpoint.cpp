#include "train/checkpoint.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <type_traits>

#include "base/error.h"
#include "base/file_output.h"
#include "format/base64.h"
#include "format/file_bytes.h"
#include "model/model_writer.h"
#include "model/vocabulary.h"
#include "model/weights_file.h"
#include "train/data_parallel.h"
#include "train/initial_weights.h"

namespace nextword {
namespace {

using nlohmann::json;

constexpr const char* kCheckpointFormat = "nextword-checkpoint";

// Three float32 copies of the largest weights in base64 (parameters, AdamW's
// m and v), the vocabulary and the options: 4x the weights' limit is ample.
constexpr size_t kMaxCheckpointBytes = 4 * kMaxWeightsBytes;

// Every option a checkpoint records, each named once: `field(name, member)`
// is called for each, for writing and for reading alike.
template <typename Options, typename Field>
void visit_options(Options& o, Field field) {
  field("corpus", o.corpus);
  field("vocab_size", o.vocab_size);
  field("attention_bias", o.attention_bias);
  field("ffn_bias", o.ffn_bias);
  field("classifier_bias", o.classifier_bias);
  field("batch", o.batch);
  field("document_windows", o.document_windows);
  field("shuffle", o.shuffle);
  field("steps", o.steps);
  field("warmup", o.warmup);
  field("lr", o.lr);
  field("min_lr", o.min_lr);
  field("schedule", o.schedule);
  field("decay_fraction", o.decay_fraction);
  field("init_from", o.init_from);
  field("optimizer", o.optimizer);
  field("muon_lr", o.muon.lr);
  field("muon_momentum", o.muon.momentum);
  field("weight_decay", o.weight_decay);
  field("beta1", o.adamw.beta1);
  field("beta2", o.adamw.beta2);
  field("eps", o.adamw.eps);
  field("clip", o.clip);
  field("dropout", o.dropout);
  field("teacher", o.teacher);
  field("teacher_weight", o.teacher_weight);
  field("temperature", o.temperature);
  field("init_std", o.init_std);
  field("zero_init_projections", o.zero_init_projections);
  field("val_fraction", o.val_fraction);
  field("eval_every", o.eval_every);
  field("log_every", o.log_every);
  field("checkpoint_every", o.checkpoint_every);
  field("seed", o.seed);
  field("threads", o.threads);
  field("bf16", o.bf16);
}

// A JSON value read into `out`. Integers must be stored as integers within
// the member's range: nlohmann's get<int> of 4e48 converts a double out of
// range, which is undefined; a file is refused instead, naming the field.
template <typename T>
void read_field(const json& value, const std::string& file, const std::string& name, T& out) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const bool fits =
        value.is_number_unsigned()
            ? value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
            : value.is_number_integer() &&
                  value.get<int64_t>() >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                  (std::is_unsigned_v<T> ||
                   value.get<int64_t>() <= static_cast<int64_t>(std::numeric_limits<T>::max()));
    if (!fits) {
      throw model_error(file, name,
                        "must be an integer from " + std::to_string(std::numeric_limits<T>::min()) +
                            " to " + std::to_string(std::numeric_limits<T>::max()) + ", got " +
                            value.dump());
    }
    out = std::is_unsigned_v<T> ? static_cast<T>(value.get<uint64_t>())
                                : static_cast<T>(value.get<int64_t>());
  } else {
    value.get_to(out);
  }
}

json options_to_json(const TrainOptions& o) {
  json j;
  j["model"] = config_to_json(o.model);
  visit_options(o, [&j](const char* name, const auto& value) { j[name] = value; });
  return j;
}

TrainOptions options_from_json(const json& j, const std::string& file) {
  TrainOptions o;
  o.model = parse_config(j.at("model"), file);
  visit_options(o, [&j, &file](const char* name, auto& value) {
    // Checkpoints written by older versions lack the options added since:
    // theirs were the defaults (feed-forward biases trained, no teacher,
    // cosine, no start from a model, AdamW, GPT-2's initialization).
    static const std::set<std::string_view> added{
        "ffn_bias",         "teacher", "teacher_weight", "temperature",          "bf16",
        "document_windows", "shuffle", "schedule",       "decay_fraction",       "init_from",
        "optimizer",        "muon_lr", "muon_momentum",  "zero_init_projections"};
    if (added.count(name) != 0 && !j.contains(name)) return;
    read_field(j.at(name), file, std::string("options.") + name, value);
  });
  return o;
}

std::string b64_of(const float* values, size_t n) {
  return base64_encode({reinterpret_cast<const char*>(values), n * sizeof(float)});
}

std::string checkpoint_path(const std::string& dir) { return dir + "/checkpoint.json"; }

}  // namespace

void save_trained_model(const Model& m) {
  save_model(m, m.paths);
  const std::string binary =
      (std::filesystem::path(m.paths.weights).parent_path() / "weights.safetensors").string();
  std::error_code ec;
  if (std::filesystem::exists(binary, ec)) {
    write_file_atomically(binary, encode_weights(m.config, m.weights, WeightsFormat::kSafetensors));
  }
}

void save_checkpoint(const RunRecord& r, const Model& model, const std::vector<float>& m,
                     const std::vector<float>& v) {
  json j;
  j["format"] = kCheckpointFormat;
  j["version"] = 1;
  j["step"] = r.step;
  j["elapsed_seconds"] = r.elapsed_seconds;
  j["options"] = options_to_json(r.options);
  j["corpus_bytes"] = r.corpus_bytes;
  j["ranks"] = r.ranks;
  j["vocab"] = model.vocab.words();
  j["params"] =
      b64_of(model.weights.values(), static_cast<size_t>(model.weights.parameter_count()));
  j["adam_m"] = b64_of(m.data(), m.size());
  j["adam_v"] = b64_of(v.data(), v.size());
  // The model first: a checkpoint never points past the weights on disk.
  save_trained_model(model);
  write_file_atomically(checkpoint_path(r.options.out_dir), j.dump() + "\n");
}

Checkpoint::Checkpoint(const std::string& dir) : file_(checkpoint_path(dir)) {
  std::error_code ec;
  if (!std::filesystem::exists(file_, ec)) {
    throw Error(ExitCode::kIo, file_ + ": cannot open: no checkpoint to resume from");
  }
  const std::shared_ptr<FileBytes> bytes = FileBytes::open(
      file_, FileLimits{kMaxCheckpointBytes, "a checkpoint.json", check_json_object_start});
  try {
    json_ = json::parse(bytes->text());
  } catch (const json::exception& e) {
    throw model_error(file_, "", std::string("not a valid checkpoint: ") + e.what());
  }
  const auto format = json_.find("format"), version = json_.find("version");
  if (!json_.is_object() || format == json_.end() || *format != kCheckpointFormat ||
      version == json_.end() || *version != 1) {
    throw model_error(file_, "format", "not a nextword checkpoint of version 1");
  }
  try {
    record.options = options_from_json(json_.at("options"), file_);
    record.options.out_dir = dir;
    read_field(json_.at("step"), file_, "step", record.step);
    record.elapsed_seconds = json_.at("elapsed_seconds").get<double>();
    record.corpus_bytes.clear();
    if (!json_.at("corpus_bytes").is_array()) {
      throw model_error(file_, "corpus_bytes", "must be an array of file sizes");
    }
    for (const json& size : json_.at("corpus_bytes")) {
      read_field(size, file_, "corpus_bytes", record.corpus_bytes.emplace_back());
    }
    // Written before data-parallel training: one process.
    if (json_.contains("ranks")) read_field(json_.at("ranks"), file_, "ranks", record.ranks);
    vocab = json_.at("vocab").get<std::vector<std::string>>();
  } catch (const json::exception& e) {
    throw model_error(file_, "", std::string("not a valid checkpoint: ") + e.what());
  }
  check();
}

// A checkpoint is a file like any other: what the run relies on is checked,
// and its sizes against what it holds before memory is allocated for them.
void Checkpoint::check() const {
  const TrainOptions& o = record.options;
  // Another count of ranks would split the batches, and draw dropout masks,
  // otherwise than the run did: a usage error, before the options' rules
  // (which split the batch over the ranks of this run).
  if (record.ranks != data_parallel::ranks()) {
    throw Error(ExitCode::kUsage, file_ + ": ranks: saved by " + std::to_string(record.ranks) +
                                      " ranks, resumed with " +
                                      std::to_string(data_parallel::ranks()));
  }
  try {
    check_options(o);
  } catch (const Error& e) {
    throw model_error(file_, "options", e.message());
  }
  if (vocab.size() < 3) {
    throw model_error(file_, "vocab",
                      "holds " + std::to_string(vocab.size()) + " words, fewer than 3");
  }
  const Vocabulary vocabulary(vocab, file_ + ": vocab");  // no word twice
  if (o.model.has_bos() && vocabulary.find(o.model.bos_token) < 0) {
    throw model_error(file_, "vocab", "has no entry for bos_token \"" + o.model.bos_token + "\"");
  }
  Config c = o.model;
  c.vocab_size = static_cast<int>(vocab.size());
  int64_t parameters = 0;
  for (const TensorSpec& spec : trained_tensors(o, c)) parameters += spec.size();
  const int64_t stored = stored_floats("params");
  if (parameters != stored) {
    throw model_error(file_, "params",
                      "holds " + std::to_string(stored) + " float32 values, its options need " +
                          std::to_string(parameters));
  }
}

const std::string& Checkpoint::tensor_text(const char* field) const {
  const auto value = json_.find(field);
  if (value == json_.end() || !value->is_string()) {
    throw model_error(file_, field, "must be a string of base64 float32 values");
  }
  return value->get_ref<const std::string&>();
}

int64_t Checkpoint::stored_floats(const char* field) const {
  const std::string& text = tensor_text(field);
  size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  return static_cast<int64_t>((text.size() / 4 * 3 - std::min(padding, text.size() / 4 * 3)) /
                              sizeof(float));
}

void Checkpoint::restore(const char* field, float* out, size_t n) const {
  std::optional<std::string> bytes = base64_decode(tensor_text(field));
  if (!bytes || bytes->size() != n * sizeof(float)) {
    throw model_error(file_, field, "does not hold " + std::to_string(n) + " float32 values");
  }
  std::memcpy(out, bytes->data(), bytes->size());
}

void remove_stale_temporaries(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    for (const char* file :
         {"vocab.json", "weights.json", "weights.safetensors", "checkpoint.json"}) {
      if (name.rfind(std::string(file) + ".tmp.", 0) == 0)
        std::filesystem::remove(entry.path(), ec);
    }
  }
}

}  // namespace nextword
