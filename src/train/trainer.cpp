#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>

#include "base/error.h"
#include "base/file_output.h"
#include "base/random.h"
#include "base/threading.h"
#include "math/layers.h"
#include "math/training_products.h"
#include "model/lexicon_index.h"
#include "train/checkpoint.h"
#include "train/corpus.h"
#include "train/data_parallel.h"
#include "train/initial_weights.h"
#include "train/run_lock.h"
#include "train/training_step.h"
#include "transformer/backward.h"
#include "transformer/transformer.h"

namespace nextword {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

void check_options(const TrainOptions& o) {
  const Config& c = o.model;
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw usage_error(what);
  };
  require(!o.corpus.empty() || o.checkpoint_every < 0, "train: no corpus file given");
  require(!o.out_dir.empty(), "train: --output DIR is required");
  require(o.vocab_size >= 3, "train: --vocab-size must be at least 3");
  require(c.d_model >= 1 && c.n_heads >= 1 && c.d_k >= 1 && c.d_v >= 1,
          "train: --d-model, --heads, --d-k and --d-v must be positive");
  require(c.n_layers >= 0 && c.d_ff >= 0, "train: --layers and --d-ff must not be negative");
  require(c.max_len >= 1, "train: --context must be at least 1");
  require(o.batch >= 1, "train: --batch must be at least 1");
  const int ranks = data_parallel::ranks();
  require(o.batch % ranks == 0, "train: --batch " + std::to_string(o.batch) +
                                    " does not split evenly over the " + std::to_string(ranks) +
                                    " ranks of mpirun");
  require(o.steps >= 1, "train: --steps must be at least 1");
  require(o.warmup >= 0, "train: --warmup must not be negative");
  require(o.lr > 0 && o.min_lr >= 0 && o.min_lr <= o.lr,
          "train: need 0 <= --min-lr <= --lr, --lr > 0");
  require(o.dropout >= 0 && o.dropout < 1, "train: --dropout must be in [0, 1)");
  require(o.val_fraction >= 0 && o.val_fraction < 1, "train: --val-fraction must be in [0, 1)");
  require(o.weight_decay >= 0 && o.clip >= 0,
          "train: --weight-decay and --clip must not be negative");
  require(o.threads >= 0, "train: --threads must not be negative");
  require(o.teacher_weight >= 0 && o.teacher_weight <= 1,
          "train: --teacher-weight must be in [0, 1]");
  require(o.temperature > 0, "train: --temperature must be positive");
  require(o.schedule == "cosine" || o.schedule == "wsd",
          "train: --schedule must be cosine or wsd, got \"" + o.schedule + "\"");
  require(o.decay_fraction >= 0 && o.decay_fraction <= 1,
          "train: --decay-fraction must be in [0, 1]");
  require(o.optimizer == "adamw" || o.optimizer == "muon",
          "train: --optimizer must be adamw or muon, got \"" + o.optimizer + "\"");
  require(o.muon.lr > 0 && o.muon.momentum >= 0 && o.muon.momentum < 1,
          "train: need --muon-lr > 0 and --muon-momentum in [0, 1)");
  require(o.teacher.empty() || !c.adaptive(),
          "train: --teacher needs a model without --adaptive-cutoffs (its distributions are "
          "over every word at every position)");
  require(!o.bf16 || bf16_available(), std::string("train: --bf16: ") + bf16_unavailable_reason());
}

namespace {

int64_t file_size(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec) &&
      !std::filesystem::is_directory(path, ec)) {
    throw Error(ExitCode::kIo,
                path + ": not a regular file (train reads its text again to resume)");
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(ExitCode::kIo, path + ": cannot read: " + ec.message());
  return static_cast<int64_t>(size);
}

// Everything a run is: the model, the training state and the data.
struct Run {
  TrainOptions options;
  Model model;
  std::optional<Model> teacher;  // distillation's
  std::optional<TrainingState> training;
  TokenStream data;
  // With TrainOptions::document_windows, where windows may start: the bos
  // of every document with T + 1 tokens from it.
  std::vector<size_t> window_starts;
  std::vector<int64_t> corpus_bytes;
  std::optional<std::string> lexicon;  // lexicon.tsv of a fresh run, written with its first save
  int step = 0;                        // steps done
  double elapsed = 0;                  // seconds of training before this process
};

Model make_model(const TrainOptions& o, std::vector<std::string> words) {
  Config c = o.model;
  c.vocab_size = static_cast<int>(words.size());
  c.unk_token = words[0];
  if (c.adaptive() && c.adaptive_cutoffs.back() >= c.vocab_size) {
    throw usage_error(
        "train: --adaptive-cutoffs: the last cutoff, " + std::to_string(c.adaptive_cutoffs.back()) +
        ", must be below the vocabulary's size, " + std::to_string(c.vocab_size) + " words");
  }
  Vocabulary vocab(std::move(words));
  std::vector<TensorSpec> present = trained_tensors(o, c);
  Weights weights(c, std::move(present));
  // Training writes weights.json, the public form (and keeps a
  // weights.safetensors beside it current: see save_trained_model).
  const std::filesystem::path dir(o.out_dir);
  const ModelPaths paths{(dir / "vocab.json").string(), (dir / "weights.json").string(), ""};
  const int unk = vocab.find(c.unk_token);
  const int bos = c.has_bos() ? vocab.find(c.bos_token) : -1;
  return Model{paths, 0,   0,       c,       std::move(vocab), std::move(weights),
               unk,   bos, nullptr, nullptr, nullptr};
}

// Distillation's teacher: a model whose vocabulary is the run's, word for
// word, and whose context is at least the run's.
void load_teacher(Run& run) {
  const std::string& dir = run.options.teacher;
  if (dir.empty()) return;
  run.teacher = load_model(ModelPaths::in_directory(dir));
  // Its forward passes run under Threading::kBlas, where one wide QKV product
  // beats three narrow ones.
  run.teacher->weights.fuse_qkv(run.teacher->config);
  const Model &t = *run.teacher, &m = run.model;
  const std::string at = "train: --teacher " + dir + ": ";
  if (t.vocab.size() != m.vocab.size()) {
    throw usage_error(at + "its vocabulary has " + std::to_string(t.vocab.size()) +
                      " words, the text's " + std::to_string(m.vocab.size()));
  }
  for (int id = 0; id < m.vocab.size(); ++id) {
    if (t.vocab.word(id) != m.vocab.word(id)) {
      throw usage_error(at + "word " + std::to_string(id) + " is \"" +
                        std::string(t.vocab.word(id)) + "\", the text's vocabulary has \"" +
                        std::string(m.vocab.word(id)) + "\"");
    }
  }
  if (t.config.max_len < m.config.max_len) {
    throw usage_error(at + "its context is " + std::to_string(t.config.max_len) +
                      " tokens, shorter than --context " + std::to_string(m.config.max_len));
  }
  run.training->teacher = &*run.teacher;
}

void load_data(Run& run, const std::vector<Document>& documents) {
  const Model& m = run.model;
  run.data = make_token_stream(documents, m.vocab, m.unk_id, m.bos_id, run.options.val_fraction);
  const int T = run.options.model.max_len;
  if (static_cast<int64_t>(run.data.train.size()) < T + 2) {
    throw usage_error("train: the corpus has " + std::to_string(run.data.train.size()) +
                      " training tokens, fewer than --context + 2 = " + std::to_string(T + 2));
  }
  if (run.options.document_windows) {
    if (m.bos_id < 0) throw usage_error("train: --document-windows needs a bos token");
    // Never empty: the stream starts with a bos and has T + 2 tokens (above).
    run.window_starts = document_starts(run.data.train, m.bos_id, T);
  } else if (run.options.shuffle && run.data.train.size() < 2 * static_cast<size_t>(T)) {
    throw usage_error("train: --shuffle tiles the text with windows: it needs 2 x --context = " +
                      std::to_string(2 * T) + " training tokens");
  }
}

// Windows [first, first + count) of step s's batch: the batch is B windows of
// T+1 tokens at random places in the training stream, the same on every rank,
// and each rank takes its share.
void sample_batch(const Run& run, int step, int first, int count, std::vector<int>& inputs,
                  std::vector<int>& targets) {
  const int T = run.options.model.max_len;
  const auto& train = run.data.train;
  inputs.resize(static_cast<size_t>(count) * T);
  targets.resize(inputs.size());
  for (int b = 0; b < count; ++b) {
    const size_t start = window_start(run.options.seed, step, first + b, run.options.batch,
                                      run.window_starts, train.size(), T, run.options.shuffle);
    std::copy_n(train.begin() + static_cast<std::ptrdiff_t>(start), T,
                inputs.begin() + static_cast<std::ptrdiff_t>(b) * T);
    std::copy_n(train.begin() + static_cast<std::ptrdiff_t>(start) + 1, T,
                targets.begin() + static_cast<std::ptrdiff_t>(b) * T);
  }
}

// Mean loss over consecutive windows of the validation stream (no dropout).
std::optional<double> validation_loss(Run& run) {
  RunState& state = run.training->validation;
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
    if (run.model.config.adaptive()) {
      // Only the targets' clusters, as in training, not every word's ln p.
      Activations& pass = run.training->adaptive_validation;
      forward(run.model, pass, inputs.data(), count, T, Dropout{});
      total += loss_forward_backward(run.model, pass, targets.data()) * count;
      continue;
    }
    ForwardOptions fo;
    fo.all_positions = true;
    forward(run.model, state, inputs.data(), count, T, fo);
    total += mean_loss_forward_backward(state.logits.data(), targets.data(), count * T,
                                        run.model.config.vocab_size) *
             count;
  }
  return total / static_cast<double>(windows);
}

// The worker threads of a run: 0 threads is every core for one process, one
// per rank under mpirun, which may start several ranks on one machine. Each
// worker's products run on OpenBLAS single-threaded.
int set_threads(const TrainOptions& o) {
  const int threads = o.threads;
  const int automatic = data_parallel::ranks() > 1 ? 1 : available_cores();
  set_threading(Threading::kBlas, 1);
  set_training_precision(o.bf16 ? Precision::kBfloat16 : Precision::kFloat32);
  return threads > 0 ? threads : automatic;
}

TrainSummary run_training(Run& run, const TrainHooks& hooks) {
  const TrainOptions& o = run.options;
  const Config& c = run.model.config;
  // Rank 0 alone reports, validates and writes files; every rank trains.
  const bool primary = data_parallel::rank() == 0;
  const int ranks = data_parallel::ranks(), share = o.batch / ranks;
  std::optional<RunLock> lock;  // held until the run ends
  if (primary) {
    std::error_code ec;
    std::filesystem::create_directories(o.out_dir, ec);
    if (ec) {
      throw Error(ExitCode::kIo, o.out_dir + ": cannot make the model directory: " + ec.message());
    }
    lock.emplace(o.out_dir);
    remove_stale_temporaries(o.out_dir);
  }
  TrainSummary summary;
  summary.parameters = run.model.weights.parameter_count();
  summary.vocab_size = c.vocab_size;
  summary.documents = run.data.documents;
  summary.train_tokens = static_cast<int64_t>(run.data.train.size());
  summary.val_tokens = static_cast<int64_t>(run.data.val.size());
  summary.unknown_rate = run.data.words > 0 ? static_cast<double>(run.data.unknown) /
                                                  static_cast<double>(run.data.words)
                                            : 0;
  if (primary && hooks.on_start) {
    std::ostringstream line;
    line << "training " << summary.parameters << " parameters (vocabulary " << c.vocab_size
         << ", d_model " << c.d_model << ", " << c.n_layers << " layers, " << c.n_heads
         << " heads, context " << c.max_len << ") on " << summary.train_tokens << " tokens from "
         << summary.documents << " documents, " << summary.val_tokens << " held out for validation";
    hooks.on_start(line.str());
  }
  if (primary && run.step == 0) {  // the vocabulary at once, and every word seen with its count
    save_trained_model(run.model);
    if (run.lexicon) {
      const std::filesystem::path dir(o.out_dir);
      write_file_atomically((dir / "lexicon.tsv").string(), *run.lexicon);
      // Its index, for completing with the model (model/lexicon_index.h).
      LexiconIndexSource source = LexiconIndexSource::of(run.model);
      source.lexicon_bytes = run.lexicon->size();
      write_file_atomically(
          (dir / "lexicon.bin").string(),
          LexiconIndex::bytes_of(parse_lexicon("lexicon.tsv", *run.lexicon), source));
    }
  }

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
    if (primary && hooks.on_progress) hooks.on_progress(p);
    loss_sum = 0;
    loss_count = 0;
  };

  while (run.step < o.steps) {
    const int step = run.step;
    TrainingState& training = *run.training;
    sample_batch(run, step, data_parallel::rank() * share, share, inputs, targets);
    // Each rank's workers draw masks of their own, numbered over every rank.
    const int workers = static_cast<int>(training.workers.size());
    const double loss = training.gradients(run.model, o, inputs.data(), targets.data(), share,
                                           c.max_len, step, data_parallel::rank() * workers);
    // A signal on any rank stops every rank after this same step.
    const StepTotals totals = training.exchange(loss, hooks.should_stop && hooks.should_stop());
    grad_norm = training.update(run.model.weights, o, step);
    last_loss = totals.loss;
    run.step = step + 1;
    loss_sum += last_loss;
    ++loss_count;

    const bool last = run.step == o.steps;
    const bool stopping = !last && totals.stop;
    const bool evaluate = last || (o.eval_every > 0 && run.step % o.eval_every == 0);
    if (primary && evaluate) val_loss = validation_loss(run);
    if (evaluate || last || stopping || (o.log_every > 0 && run.step % o.log_every == 0)) {
      report(evaluate);
    }
    if (primary && o.checkpoint_every < 0 && (last || stopping)) {
      save_trained_model(run.model);
    } else if (primary && (last || stopping ||
                           (o.checkpoint_every > 0 && run.step % o.checkpoint_every == 0))) {
      const RunRecord record{o, run.step, run.elapsed + seconds_since_start(), run.corpus_bytes,
                             ranks};
      save_checkpoint(record, run.model, training.m, training.v);
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

// A fresh run on documents read; corpus_bytes: the sizes of the files they
// came from, which a resumed run checks.
TrainSummary train_documents(const TrainOptions& options, const std::vector<Document>& documents,
                             const TrainHooks& hooks, std::vector<int64_t> corpus_bytes) {
  check_options(options);
  const int workers = set_threads(options);
  Run run;
  run.options = options;
  run.corpus_bytes = std::move(corpus_bytes);
  const Lexicon lexicon = count_words(documents, options.model.unk_token, options.model.bos_token);
  // A run from a model keeps that model's vocabulary; a fresh one takes
  // the text's most frequent words.
  std::optional<Model> from;
  if (!options.init_from.empty()) from.emplace(init_model(options));
  run.model = make_model(
      options, from ? from->vocab.words()
                    : build_vocabulary(lexicon, options.vocab_size, options.model.unk_token,
                                       options.model.bos_token));
  run.lexicon = format_lexicon(lexicon);
  run.options.model = run.model.config;
  initialize(run.model.weights, run.options, run.model.config);
  if (from) copy_weights(run.model.weights, *from, options.init_from);
  run.training.emplace(run.model.weights, workers);
  load_teacher(run);
  load_data(run, documents);
  return run_training(run, hooks);
}

}  // namespace

TrainSummary train(const TrainOptions& options, const TrainHooks& hooks) {
  check_options(options);
  std::vector<int64_t> corpus_bytes;
  for (const std::string& path : options.corpus) corpus_bytes.push_back(file_size(path));
  return train_documents(options, read_documents(options.corpus, options.model.tokenizer), hooks,
                         std::move(corpus_bytes));
}

TrainSummary train(const TrainOptions& options, const std::vector<Document>& documents,
                   const TrainHooks& hooks) {
  return train_documents(options, documents, hooks, {});
}

TrainSummary resume_training(const std::string& dir, const TrainHooks& hooks,
                             std::optional<int> threads, std::optional<int> steps) {
  const Checkpoint checkpoint(dir);
  Run run;
  run.options = checkpoint.record.options;
  if (threads) run.options.threads = *threads;
  run.step = checkpoint.record.step;
  if (steps) {
    if (*steps < run.step) {
      throw usage_error("train: --steps " + std::to_string(*steps) + ": the run in " + dir +
                        " has done " + std::to_string(run.step) + " already");
    }
    run.options.steps = *steps;
  }
  run.elapsed = checkpoint.record.elapsed_seconds;
  run.corpus_bytes = checkpoint.record.corpus_bytes;
  run.model = make_model(run.options, checkpoint.vocab);
  for (size_t i = 0; i < run.options.corpus.size(); ++i) {
    if (i >= run.corpus_bytes.size() || file_size(run.options.corpus[i]) != run.corpus_bytes[i]) {
      throw Error(ExitCode::kIo, run.options.corpus[i] +
                                     ": changed since the checkpoint was written; cannot resume");
    }
  }
  run.training.emplace(run.model.weights, set_threads(run.options));
  const auto n = static_cast<size_t>(run.model.weights.parameter_count());
  checkpoint.restore("params", run.model.weights.values(), n);
  checkpoint.restore("adam_m", run.training->m.data(), n);
  checkpoint.restore("adam_v", run.training->v.data(), n);
  load_teacher(run);
  load_data(run, read_documents(run.options.corpus, run.options.model.tokenizer));
  return run_training(run, hooks);
}

}  // namespace nextword
