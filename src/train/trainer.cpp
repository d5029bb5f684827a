#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "base/random.h"
#include "base/threading.h"
#include "math/layers.h"
#include "model/base64.h"
#include "model/model_writer.h"
#include "model/weights_file.h"
#include "train/corpus.h"
#include "transformer/backward.h"
#include "transformer/transformer.h"

namespace nextword {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kCheckpointFormat = "nextword-checkpoint";

Error usage_error(const std::string& what) { return Error(ExitCode::kUsage, what); }

// Every option a checkpoint records, each named once: `field(name, member)`
// is called for each, for writing and for reading alike.
template <typename Options, typename Field>
void visit_options(Options& o, Field field) {
  field("corpus", o.corpus);
  field("vocab_size", o.vocab_size);
  field("attention_bias", o.attention_bias);
  field("classifier_bias", o.classifier_bias);
  field("batch", o.batch);
  field("steps", o.steps);
  field("warmup", o.warmup);
  field("lr", o.lr);
  field("min_lr", o.min_lr);
  field("weight_decay", o.weight_decay);
  field("beta1", o.adamw.beta1);
  field("beta2", o.adamw.beta2);
  field("eps", o.adamw.eps);
  field("clip", o.clip);
  field("dropout", o.dropout);
  field("init_std", o.init_std);
  field("val_fraction", o.val_fraction);
  field("eval_every", o.eval_every);
  field("log_every", o.log_every);
  field("checkpoint_every", o.checkpoint_every);
  field("seed", o.seed);
  field("threads", o.threads);
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
  visit_options(o, [&j](const char* name, auto& value) { j.at(name).get_to(value); });
  return o;
}

void check_options(const TrainOptions& o) {
  const Config& c = o.model;
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw usage_error(what);
  };
  require(!o.corpus.empty(), "train: no corpus file given");
  require(!o.out_dir.empty(), "train: --output DIR is required");
  require(o.vocab_size >= 3, "train: --vocab-size must be at least 3");
  require(c.d_model >= 1 && c.n_heads >= 1 && c.d_k >= 1 && c.d_v >= 1,
          "train: --d-model, --heads, --d-k and --d-v must be positive");
  require(c.n_layers >= 0 && c.d_ff >= 0, "train: --layers and --d-ff must not be negative");
  require(c.max_len >= 1, "train: --context must be at least 1");
  require(o.batch >= 1, "train: --batch must be at least 1");
  require(o.steps >= 1, "train: --steps must be at least 1");
  require(o.warmup >= 0, "train: --warmup must not be negative");
  require(o.lr > 0 && o.min_lr >= 0 && o.min_lr <= o.lr,
          "train: need 0 <= --min-lr <= --lr, --lr > 0");
  require(o.dropout >= 0 && o.dropout < 1, "train: --dropout must be in [0, 1)");
  require(o.val_fraction >= 0 && o.val_fraction < 1, "train: --val-fraction must be in [0, 1)");
  require(o.weight_decay >= 0 && o.clip >= 0,
          "train: --weight-decay and --clip must not be negative");
  require(o.threads >= 0, "train: --threads must not be negative");
}

// The tensors a run trains: every required one, plus the optional biases asked for.
std::vector<TensorSpec> trained_tensors(const TrainOptions& o, const Config& c) {
  std::vector<TensorSpec> present;
  for (TensorSpec& spec : layout_for(c)) {
    const bool classifier = spec.name == "classifier_bias";
    if (!spec.optional || (classifier ? o.classifier_bias : o.attention_bias)) {
      present.push_back(std::move(spec));
    }
  }
  return present;
}

// GPT-2's initialization: matrices N(0, init_std), the projections that feed
// the residual stream scaled by 1/sqrt(2 L), norm gains 1, biases 0.
void initialize(Weights& w, const TrainOptions& o, const Config& c) {
  uint64_t counter = 0;
  for (size_t t = 0; t < w.tensors().size(); ++t) {
    const TensorSpec& spec = w.tensors()[t];
    float* data = w.mutable_data(t);
    const auto n = static_cast<size_t>(spec.size());
    if (spec.shape.size() == 1) {
      const float value = spec.name.ends_with("norm1.weight") ||
                                  spec.name.ends_with("norm2.weight") ||
                                  spec.name == "final_norm.weight"
                              ? 1.0f
                              : 0.0f;
      std::fill(data, data + n, value);
      continue;
    }
    double std = o.init_std;
    if (spec.name.ends_with("attn.w_o") || spec.name.ends_with("ffn.w_out")) {
      std /= std::sqrt(2.0 * std::max(c.n_layers, 1));
    }
    for (size_t i = 0; i < n; ++i, ++counter) {
      // Box-Muller on two independent uniforms.
      const double u1 = 1.0 - uniform01(random_bits(o.seed, RandomStream::kInit, counter, 0));
      const double u2 = uniform01(random_bits(o.seed, RandomStream::kInit, counter, 1));
      data[i] = static_cast<float>(std * std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * M_PI * u2));
    }
  }
}

struct CorpusFile {
  std::string path;
  int64_t bytes = 0;
};

int64_t file_size(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(ExitCode::kIo, path + ": cannot read: " + ec.message());
  return static_cast<int64_t>(size);
}

// Everything a run is: the model, the optimizer state and the data.
struct Run {
  TrainOptions options;
  Model model;
  std::optional<Optimizer> optimizer;
  TokenStream data;
  std::vector<int64_t> corpus_bytes;
  int step = 0;        // steps done
  double elapsed = 0;  // seconds of training before this process
};

Model make_model(const TrainOptions& o, std::vector<std::string> words) {
  Config c = o.model;
  c.vocab_size = static_cast<int>(words.size());
  c.unk_token = words[0];
  Vocabulary vocab(std::move(words));
  std::vector<TensorSpec> present = trained_tensors(o, c);
  Weights weights(c, std::move(present));
  // Training writes weights.json, the public form (and keeps a
  // weights.safetensors beside it current: see save_trained_model).
  const std::filesystem::path dir(o.out_dir);
  const ModelPaths paths{(dir / "vocab.json").string(), (dir / "weights.json").string()};
  const int unk = vocab.find(c.unk_token);
  const int bos = c.has_bos() ? vocab.find(c.bos_token) : -1;
  return Model{paths, 0, 0, c, std::move(vocab), std::move(weights), unk, bos};
}

// vocab.json and weights.json; and weights.safetensors when the directory
// has one, since `--model DIR` reads that first and must not find it stale.
void save_trained_model(const Model& m) {
  save_model(m, m.paths);
  const std::string binary =
      (std::filesystem::path(m.paths.weights).parent_path() / "weights.safetensors").string();
  std::error_code ec;
  if (std::filesystem::exists(binary, ec)) {
    write_file_atomically(binary, encode_weights(m.config, m.weights, WeightsFormat::kSafetensors));
  }
}

void load_data(Run& run, const std::vector<Document>& documents) {
  const Model& m = run.model;
  run.data = make_token_stream(documents, m.vocab, m.unk_id, m.bos_id, run.options.val_fraction);
  const int T = run.options.model.max_len;
  if (static_cast<int64_t>(run.data.train.size()) < T + 2) {
    throw usage_error("train: the corpus has " + std::to_string(run.data.train.size()) +
                      " training tokens, fewer than --context + 2 = " + std::to_string(T + 2));
  }
}

// Step s's batch: B windows of T+1 tokens at random places in the training stream.
void sample_batch(const Run& run, int step, std::vector<int>& inputs, std::vector<int>& targets) {
  const int B = run.options.batch, T = run.options.model.max_len;
  const auto& train = run.data.train;
  const uint64_t starts = train.size() - static_cast<size_t>(T);  // start + T < size
  inputs.resize(static_cast<size_t>(B) * T);
  targets.resize(inputs.size());
  for (int b = 0; b < B; ++b) {
    const size_t start = random_bits(run.options.seed, RandomStream::kWindows,
                                     static_cast<uint64_t>(step), static_cast<uint64_t>(b)) %
                         starts;
    std::copy_n(train.begin() + static_cast<std::ptrdiff_t>(start), T,
                inputs.begin() + static_cast<std::ptrdiff_t>(b) * T);
    std::copy_n(train.begin() + static_cast<std::ptrdiff_t>(start) + 1, T,
                targets.begin() + static_cast<std::ptrdiff_t>(b) * T);
  }
}

// Mean loss over consecutive windows of the validation stream (no dropout).
std::optional<double> validation_loss(Run& run, RunState& state) {
  const auto& val = run.data.val;
  if (val.size() < 2) return std::nullopt;
  const int T = std::min<int>(run.options.model.max_len, static_cast<int>(val.size()) - 1);
  const int B = run.options.batch;
  const size_t windows = (val.size() - 1) / static_cast<size_t>(T);
  std::vector<int> inputs, targets;
  double total = 0;
  for (size_t first = 0; first < windows; first += static_cast<size_t>(B)) {
    const int count = static_cast<int>(std::min<size_t>(static_cast<size_t>(B), windows - first));
    inputs.clear();
    targets.clear();
    for (int b = 0; b < count; ++b) {
      const auto start = static_cast<std::ptrdiff_t>((first + static_cast<size_t>(b)) * T);
      inputs.insert(inputs.end(), val.begin() + start, val.begin() + start + T);
      targets.insert(targets.end(), val.begin() + start + 1, val.begin() + start + T + 1);
    }
    ForwardOptions fo;
    fo.all_positions = true;
    forward(run.model, state, inputs.data(), count, T, fo);
    total += loss_forward_backward(state, targets.data(), run.model.config.vocab_size) * count;
  }
  return total / static_cast<double>(windows);
}

std::string b64_of(const std::vector<float>& v) {
  return base64_encode({reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)});
}

std::string b64_of(const Weights& w) {
  return base64_encode({reinterpret_cast<const char*>(w.values()),
                        static_cast<size_t>(w.parameter_count()) * sizeof(float)});
}

void decode_into(float* out, size_t n, const json& j, const std::string& file, const char* field) {
  std::optional<std::string> bytes = base64_decode(j.at(field).get<std::string>());
  if (!bytes || bytes->size() != n * sizeof(float)) {
    throw model_error(file, field, "does not hold " + std::to_string(n) + " float32 values");
  }
  std::memcpy(out, bytes->data(), bytes->size());
}

std::string checkpoint_path(const std::string& dir) { return dir + "/checkpoint.json"; }

void save_checkpoint(const Run& run) {
  json j;
  j["format"] = kCheckpointFormat;
  j["version"] = 1;
  j["step"] = run.step;
  j["elapsed_seconds"] = run.elapsed;
  j["options"] = options_to_json(run.options);
  j["corpus_bytes"] = run.corpus_bytes;
  j["vocab"] = run.model.vocab.words();
  j["params"] = b64_of(run.model.weights);
  j["adam_m"] = b64_of(run.optimizer->m);
  j["adam_v"] = b64_of(run.optimizer->v);
  // The model first: a checkpoint never points past the weights on disk.
  save_trained_model(run.model);
  write_file_atomically(checkpoint_path(run.options.out_dir), j.dump() + "\n");
}

void set_threads(int threads) {
  set_threading(Threading::kBlas, threads > 0 ? threads : available_cores());
}

// Temporary files of a run that was killed while writing (FILE.tmp.PID, see
// write_file_atomically): never read, so removed when a run starts.
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

TrainSummary run_training(Run& run, const TrainHooks& hooks) {
  const TrainOptions& o = run.options;
  const Config& c = run.model.config;
  std::filesystem::create_directories(o.out_dir);
  remove_stale_temporaries(o.out_dir);
  TrainSummary summary;
  summary.parameters = run.model.weights.parameter_count();
  summary.vocab_size = c.vocab_size;
  summary.documents = run.data.documents;
  summary.train_tokens = static_cast<int64_t>(run.data.train.size());
  summary.val_tokens = static_cast<int64_t>(run.data.val.size());
  summary.unknown_rate = run.data.words > 0 ? static_cast<double>(run.data.unknown) /
                                                  static_cast<double>(run.data.words)
                                            : 0;
  if (hooks.on_start) {
    std::ostringstream line;
    line << "training " << summary.parameters << " parameters (vocabulary " << c.vocab_size
         << ", d_model " << c.d_model << ", " << c.n_layers << " layers, " << c.n_heads
         << " heads, context " << c.max_len << ") on " << summary.train_tokens << " tokens from "
         << summary.documents << " documents, " << summary.val_tokens << " held out for validation";
    hooks.on_start(line.str());
  }
  if (run.step == 0) save_trained_model(run.model);  // the vocabulary at once

  std::vector<int> inputs, targets;
  const auto started = Clock::now();
  const int start_step = run.step;
  double loss_sum = 0;
  int loss_count = 0;
  double last_loss = 0, grad_norm = 0;
  std::optional<double> val_loss;
  const int64_t tokens_per_step = static_cast<int64_t>(o.batch) * c.max_len;
  auto seconds_since_start = [&] {
    return std::chrono::duration<double>(Clock::now() - started).count();
  };
  auto report = [&](bool with_val) {
    TrainProgress p;
    p.step = run.step;
    p.steps = o.steps;
    p.loss = loss_count > 0 ? loss_sum / loss_count : last_loss;
    if (with_val) p.val_loss = val_loss;
    p.lr = learning_rate(o, std::max(run.step - 1, 0));
    p.grad_norm = grad_norm;
    const double seconds = seconds_since_start();
    p.elapsed_seconds = run.elapsed + seconds;
    p.tokens_per_second = seconds > 0 ? (run.step - start_step) * tokens_per_step / seconds : 0;
    p.eta_seconds =
        run.step > start_step ? seconds / (run.step - start_step) * (o.steps - run.step) : 0;
    if (hooks.on_progress) hooks.on_progress(p);
    loss_sum = 0;
    loss_count = 0;
  };

  while (run.step < o.steps) {
    const int step = run.step;
    sample_batch(run, step, inputs, targets);
    last_loss = train_step(
        run.model, *run.optimizer, o, step, inputs.data(), targets.data(), o.batch, c.max_len,
        random_bits(o.seed, RandomStream::kDropout, static_cast<uint64_t>(step), 0));
    grad_norm = run.optimizer->grad_norm;
    run.step = step + 1;
    loss_sum += last_loss;
    ++loss_count;

    const bool last = run.step == o.steps;
    const bool stopping = !last && hooks.should_stop && hooks.should_stop();
    const bool evaluate = last || (o.eval_every > 0 && run.step % o.eval_every == 0);
    if (evaluate) val_loss = validation_loss(run, run.optimizer->state);
    if (evaluate || last || stopping || (o.log_every > 0 && run.step % o.log_every == 0)) {
      report(evaluate);
    }
    if (last || stopping || (o.checkpoint_every > 0 && run.step % o.checkpoint_every == 0)) {
      const double elapsed_before = run.elapsed;
      run.elapsed = elapsed_before + seconds_since_start();
      save_checkpoint(run);
      run.elapsed = elapsed_before;
    }
    if (stopping) {
      summary.stopped = true;
      break;
    }
  }
  const double seconds = seconds_since_start();
  summary.steps_done = run.step;
  summary.loss = last_loss;
  summary.val_loss = val_loss;
  summary.seconds = run.elapsed + seconds;
  summary.tokens_per_second = seconds > 0 ? (run.step - start_step) * tokens_per_step / seconds : 0;
  return summary;
}

}  // namespace

Optimizer::Optimizer(const Weights& weights) {
  const auto n = static_cast<size_t>(weights.parameter_count());
  grads.assign(n, 0.0f);
  m.assign(n, 0.0f);
  v.assign(n, 0.0f);
  for (const TensorSpec& spec : weights.tensors()) decayed.push_back(spec.shape.size() == 2);
}

double Optimizer::update(Weights& w, const TrainOptions& o, int s) {
  grad_norm = gradient_norm(grads.data(), grads.size());
  if (o.clip > 0 && grad_norm > o.clip) {
    const auto scale = static_cast<float>(o.clip / grad_norm);
    for (float& g : grads) g *= scale;
  }
  const auto lr = static_cast<float>(learning_rate(o, s));
  size_t offset = 0;
  for (size_t t = 0; t < w.tensors().size(); ++t) {
    const auto size = static_cast<size_t>(w.tensors()[t].size());
    adamw_update(w.values() + offset, grads.data() + offset, m.data() + offset, v.data() + offset,
                 size, lr, decayed[t] ? o.weight_decay : 0.0f, o.adamw, s + 1);
    offset += size;
  }
  return grad_norm;
}

double train_step(Model& model, Optimizer& optimizer, const TrainOptions& o, int s,
                  const int* inputs, const int* targets, int B, int T, uint64_t dropout_seed) {
  ForwardOptions fo;
  fo.all_positions = true;
  fo.keep_activations = true;  // for backward()
  fo.dropout = o.dropout;
  fo.seed = dropout_seed;
  forward(model, optimizer.state, inputs, B, T, fo);
  const double loss = loss_forward_backward(optimizer.state, targets, model.config.vocab_size);
  std::fill(optimizer.grads.begin(), optimizer.grads.end(), 0.0f);
  backward(model, optimizer.state, optimizer.grad_state, optimizer.grads.data());
  optimizer.update(model.weights, o, s);
  return loss;
}

double learning_rate(const TrainOptions& o, int step) {
  if (step < o.warmup) return o.lr * (step + 1) / o.warmup;
  const int decay_steps = std::max(o.steps - o.warmup, 1);
  const double progress = std::min(1.0, static_cast<double>(step - o.warmup) / decay_steps);
  return o.min_lr + 0.5 * (o.lr - o.min_lr) * (1.0 + std::cos(M_PI * progress));
}

TrainSummary train(const TrainOptions& options, const TrainHooks& hooks) {
  check_options(options);
  set_threads(options.threads);
  Run run;
  run.options = options;
  for (const std::string& path : options.corpus) run.corpus_bytes.push_back(file_size(path));
  const std::vector<Document> documents = read_documents(options.corpus, options.model.tokenizer);
  run.model =
      make_model(options, build_vocabulary(documents, options.vocab_size, options.model.unk_token,
                                           options.model.bos_token));
  run.options.model = run.model.config;
  initialize(run.model.weights, run.options, run.model.config);
  run.optimizer.emplace(run.model.weights);
  load_data(run, documents);
  return run_training(run, hooks);
}

TrainSummary resume_training(const std::string& dir, const TrainHooks& hooks,
                             std::optional<int> threads) {
  const std::string file = checkpoint_path(dir);
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(ExitCode::kIo, file + ": cannot open: no checkpoint to resume from");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {
    throw model_error(file, "", std::string("not a valid checkpoint: ") + e.what());
  }
  if (j.value("format", "") != kCheckpointFormat || j.value("version", 0) != 1) {
    throw model_error(file, "format", "not a nextword checkpoint of version 1");
  }
  Run run;
  try {
    run.options = options_from_json(j.at("options"), file);
    run.options.out_dir = dir;
    if (threads) run.options.threads = *threads;
    run.step = j.at("step").get<int>();
    run.elapsed = j.at("elapsed_seconds").get<double>();
    run.corpus_bytes = j.at("corpus_bytes").get<std::vector<int64_t>>();
    run.model = make_model(run.options, j.at("vocab").get<std::vector<std::string>>());
  } catch (const json::exception& e) {
    throw model_error(file, "", std::string("not a valid checkpoint: ") + e.what());
  }
  for (size_t i = 0; i < run.options.corpus.size(); ++i) {
    if (i >= run.corpus_bytes.size() || file_size(run.options.corpus[i]) != run.corpus_bytes[i]) {
      throw Error(ExitCode::kIo, run.options.corpus[i] +
                                     ": changed since the checkpoint was written; cannot resume");
    }
  }
  set_threads(run.options.threads);
  run.optimizer.emplace(run.model.weights);
  const auto n = static_cast<size_t>(run.model.weights.parameter_count());
  decode_into(run.model.weights.values(), n, j, file, "params");
  decode_into(run.optimizer->m.data(), n, j, file, "adam_m");
  decode_into(run.optimizer->v.data(), n, j, file, "adam_v");
  load_data(run, read_documents(run.options.corpus, run.options.model.tokenizer));
  return run_training(run, hooks);
}

}  // namespace nextword
