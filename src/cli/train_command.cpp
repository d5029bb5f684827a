// nextword train: options in, a trained model directory out.
#include <chrono>
#include <cstdio>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "cli/progress.h"
#include "cli/stop_signals.h"
#include "train/data_parallel.h"
#include "train/initial_weights.h"
#include "train/trainer.h"

namespace nextword::cli {
namespace {

struct TrainCommand {
  TrainOptions o;
  std::string resume;
  CLI::Option* steps_option = nullptr;
  std::string positional = "learned", norm = "layernorm", activation = "gelu", scale = "sqrt_dk";
  int d_k = 0, d_v = 0, d_ff = -1, threads = 0;
  bool no_residual = false, no_causal = false, untied = false, no_bos = false;
  bool no_lowercase = false, no_split_punctuation = false;
  std::string format = "text";
  std::string from;                         // --from MODEL
  std::vector<CLI::Option*> shape_options;  // what --from takes from the model
  CLI::Option* rope_theta = nullptr;

  TrainCommand() {
    o.model.d_model = 128;
    o.model.n_layers = 4;
    o.model.n_heads = 4;
    o.model.max_len = 64;
    o.model.bos_token = "<bos>";
  }

  void add_to(CLI::App& c) {
    c.add_option("corpus", o.corpus,
                 "Text files to learn from (a blank line or a line "
                 "<|endoftext|> ends a document)");
    c.add_option("-o,--output", o.out_dir,
                 "Directory to write vocab.json, weights.json and "
                 "checkpoint.json to");
    c.add_option("--resume", resume, "Continue the run whose checkpoint is in this directory");
    c.add_option("--from", from,
                 "Fine-tune this model (a directory or an installed model's name): its shape, "
                 "vocabulary and weights, as adapt does, with every option here")
        ->type_name("MODEL");
    // The model's shape: every option of format v1.
    const size_t before_shape = c.get_options().size();
    c.add_option("--vocab-size", o.vocab_size, "Largest vocabulary, <unk> and <bos> included")
        ->capture_default_str();
    c.add_option("--d-model", o.model.d_model, "Width of the residual stream")
        ->capture_default_str();
    c.add_option("--layers", o.model.n_layers, "Attention layers")->capture_default_str();
    c.add_option("--heads", o.model.n_heads, "Heads per layer")->capture_default_str();
    c.add_option("--d-k", d_k, "Query/key width per head (default: d-model / heads)");
    c.add_option("--d-v", d_v, "Value width per head (default: d-k)");
    c.add_option("--d-ff", d_ff, "Feedforward width, 0 for none (default: 4 x d-model)");
    c.add_option("--context", o.model.max_len, "Longest context in words (max_len)")
        ->capture_default_str();
    c.add_option("--positional", positional, "none, learned, sinusoidal or rope")
        ->check(CLI::IsMember({"none", "learned", "sinusoidal", "rope"}))
        ->capture_default_str();
    rope_theta = c.add_option("--rope-theta", o.model.rope_theta,
                              "Base of the rotary positions' frequencies")
                     ->capture_default_str();
    c.add_option("--norm", norm, "none, layernorm or rmsnorm")
        ->check(CLI::IsMember({"none", "layernorm", "rmsnorm"}))
        ->capture_default_str();
    c.add_option("--norm-eps", o.model.norm_eps, "Norm epsilon")->capture_default_str();
    c.add_flag("--qk-norm", o.model.qk_norm,
               "Divide each head's query and key by their root mean square (QK-norm)");
    c.add_option("--activation", activation,
                 "gelu, relu, relu2 (squared relu) or swiglu (gated: W_gate, W_in, W_out)")
        ->check(CLI::IsMember({"gelu", "relu", "relu2", "swiglu"}))
        ->capture_default_str();
    c.add_option("--scale", scale, "Attention scale: sqrt_dk or none")
        ->check(CLI::IsMember({"sqrt_dk", "none"}))
        ->capture_default_str();
    c.add_flag("--no-residual", no_residual, "No residual connections");
    c.add_flag("--no-causal", no_causal, "Let words attend to later words too");
    c.add_flag("--untied", untied, "A classifier of its own instead of the embedding");
    c.add_flag("--attention-bias", o.attention_bias, "Train biases b_q, b_k, b_v, b_o");
    c.add_flag("--classifier-bias", o.classifier_bias, "Train the classifier bias");
    c.add_option("--adaptive-cutoffs", o.model.adaptive_cutoffs,
                 "Adaptive softmax: the head's words end at the first cutoff, each cluster at "
                 "the next (e.g. 8192,32768)")
        ->delimiter(',');
    c.add_option("--adaptive-div", o.model.adaptive_div,
                 "Adaptive softmax: cluster i's projection is d-model / div^(i+1) wide")
        ->capture_default_str();
    c.add_flag("!--no-ffn-bias", o.ffn_bias, "No feed-forward biases b_in, b_out (b_gate)");
    c.add_flag("--no-lowercase", no_lowercase, "Keep capitals (tokenizer)");
    c.add_flag("--no-split-punctuation", no_split_punctuation, "Keep punctuation inside words");
    c.add_option("--unk-token", o.model.unk_token, "The unknown-word token")->capture_default_str();
    c.add_option("--bos-token", o.model.bos_token, "The token that starts every document")
        ->capture_default_str();
    c.add_flag("--no-bos", no_bos, "No beginning-of-document token");
    const std::vector<CLI::Option*> all = c.get_options();
    shape_options.assign(all.begin() + static_cast<std::ptrdiff_t>(before_shape), all.end());
    // Optimization.
    c.add_option("--batch", o.batch, "Windows per step")->capture_default_str();
    c.add_flag("--document-windows", o.document_windows,
               "Windows start where documents start (at their bos), not anywhere");
    c.add_flag("--shuffle", o.shuffle,
               "Epochs: every window start once, in a fresh order each epoch (default: drawn at "
               "random, repeats allowed)");
    steps_option =
        c.add_option("--steps", o.steps, "Optimizer steps (with --resume: the run's new total)")
            ->capture_default_str();
    c.add_option("--warmup", o.warmup, "Steps of linear warmup")->capture_default_str();
    c.add_option("--lr", o.lr, "Peak learning rate")->capture_default_str();
    c.add_option("--schedule", o.schedule,
                 "cosine (decay over every step after the warmup) or wsd (warmup-stable-decay: "
                 "--lr until the last --decay-fraction of the steps, then down to --min-lr)")
        ->check(CLI::IsMember({"cosine", "wsd"}))
        ->capture_default_str();
    c.add_option("--decay-fraction", o.decay_fraction, "With --schedule wsd: the decay's share")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    c.add_option("--optimizer", o.optimizer,
                 "adamw, or muon: Muon for the layers' matrices (AdamW for the rest)")
        ->check(CLI::IsMember({"adamw", "muon"}))
        ->capture_default_str();
    c.add_option("--muon-lr", o.muon.lr, "With --optimizer muon: Muon's peak learning rate")
        ->capture_default_str();
    c.add_option("--muon-momentum", o.muon.momentum, "With --optimizer muon: its momentum")
        ->capture_default_str();
    c.add_option("--init-from", o.init_from,
                 "Start from this model: its vocabulary and weights (its shape must be the run's)")
        ->type_name("DIR");
    c.add_option("--min-lr", o.min_lr, "Learning rate at the end of the decay")
        ->capture_default_str();
    c.add_option("--weight-decay", o.weight_decay, "AdamW weight decay (matrices only)")
        ->capture_default_str();
    c.add_option("--beta1", o.adamw.beta1, "AdamW beta1")->capture_default_str();
    c.add_option("--beta2", o.adamw.beta2, "AdamW beta2")->capture_default_str();
    c.add_option("--clip", o.clip, "Largest gradient norm, 0 for no clipping")
        ->capture_default_str();
    c.add_option("--dropout", o.dropout, "Dropout on attention weights and residual branches")
        ->capture_default_str();
    c.add_option("--teacher", o.teacher,
                 "Distill: also learn this model's next-word distributions (same vocabulary)");
    c.add_option("--teacher-weight", o.teacher_weight,
                 "With --teacher: w in (1 - w) CE + w tau^2 KL(teacher || model)")
        ->capture_default_str();
    c.add_option("--temperature", o.temperature, "With --teacher: tau, softening both")
        ->capture_default_str();
    c.add_flag("--zero-init-projections", o.zero_init_projections,
               "Start the projections into the residual stream (w_o, w_out) at zero");
    c.add_option("--init-std", o.init_std, "Standard deviation of the initial weights")
        ->capture_default_str();
    c.add_option("--val-fraction", o.val_fraction, "Share of the text held out for validation")
        ->capture_default_str();
    c.add_option("--eval-every", o.eval_every, "Steps between validation losses")
        ->capture_default_str();
    c.add_option("--log-every", o.log_every, "Steps between progress reports")
        ->capture_default_str();
    c.add_option("--checkpoint-every", o.checkpoint_every, "Steps between checkpoints")
        ->capture_default_str();
    c.add_option("--seed", o.seed, "Seed of every random choice")->capture_default_str();
    c.add_option("--threads", threads, "Worker threads (0: every core)")->capture_default_str();
    c.add_flag("--bf16", o.bf16,
               "Training's matrix products in bf16 (oneDNN; a build with -DNEXTWORD_DNNL=ON)");
    c.add_option("-f,--format", format, "Summary on stdout: text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  }

  // The shape options, checked by the same code that reads weights.json.
  void finish_options() {
    Config& m = o.model;
    if (d_k == 0) d_k = m.n_heads > 0 ? m.d_model / m.n_heads : 0;
    if (d_v == 0) d_v = d_k;
    m.d_k = d_k;
    m.d_v = d_v;
    m.d_ff = d_ff < 0 ? 4 * m.d_model : d_ff;
    if (no_bos) m.bos_token.clear();
    nlohmann::json config = config_to_json(m);
    config["vocab_size"] = std::max(o.vocab_size, 1);
    config["positional"] = positional;
    // Given without rope, parse_config refuses it as it refuses it in a file.
    if (positional == "rope" || rope_theta->count() > 0) config["rope_theta"] = o.model.rope_theta;
    config["norm"] = norm;
    config["activation"] = activation;
    config["scale"] = scale;
    config["residual"] = !no_residual;
    config["causal"] = !no_causal;
    config["tied_classifier"] = !untied;
    config["tokenizer"] = {{"lowercase", !no_lowercase},
                           {"split_punctuation", !no_split_punctuation}};
    try {
      m = parse_config(config, "train");
    } catch (const Error& e) {
      // "train: field: what" -- a bad option, not a bad file.
      throw Error(ExitCode::kUsage, e.what());
    }
    o.threads = threads;
  }

  // --from: the model's shape, its optional tensors and vocabulary.
  void take_shape_from_model() {
    for (const CLI::Option* option : shape_options) {
      if (option->count() > 0) {
        throw usage_error("train: --from " + from + " takes the model's shape and vocabulary; " +
                          option->get_name() + " cannot change them");
      }
    }
    if (!o.init_from.empty()) throw usage_error("train: give --from or --init-from, not both");
    const std::string dir = model_directory(from);
    ModelPaths paths = ModelPaths::in_directory(dir);
    paths.memory.clear();
    take_model_shape(o, load_model(paths), dir);
    o.threads = threads;
  }

  // Under mpirun an error on one rank must end the job (the others would wait
  // for it at the next step forever), with its exit code. Every rank usually
  // meets the same error (same options, corpus and checkpoint): rank 0 says
  // it, and another rank says its own only if rank 0 has not ended the job
  // within a moment, so the user reads one line either way.
  int run() {
    if (data_parallel::ranks() == 1) return train_and_report();
    int code = static_cast<int>(ExitCode::kFailure);
    std::string message;
    try {
      code = train_and_report();
      data_parallel::finalize();
      return code;
    } catch (const Error& e) {
      code = static_cast<int>(e.code());
      message = e.message();
    } catch (const std::bad_alloc&) {
      message = "out of memory";
    } catch (const std::exception& e) {
      message = std::string("internal error: ") + e.what();
    }
    if (data_parallel::rank() != 0) std::this_thread::sleep_for(std::chrono::seconds(2));
    report(message);
    data_parallel::abort(code);
  }

  int train_and_report() {
    const bool primary = data_parallel::rank() == 0;  // the only rank that prints
    Progress progress;
    TrainHooks hooks;
    hooks.on_start = [&](const std::string& line) { progress.message(line); };
    hooks.on_progress = [&](const TrainProgress& p) {
      nlohmann::ordered_json record = {{"step", p.step},
                                       {"steps", p.steps},
                                       {"loss", p.loss},
                                       {"lr", p.lr},
                                       {"grad_norm", p.grad_norm},
                                       {"tokens_per_s", std::round(p.tokens_per_second)},
                                       {"elapsed_s", std::round(p.elapsed_seconds * 10) / 10},
                                       {"eta_s", std::round(p.eta_seconds)}};
      char text[200];
      std::snprintf(text, sizeof text, "step %d/%d  %.0f tok/s  loss %.4f  lr %.2e  ETA %s", p.step,
                    p.steps, p.tokens_per_second, p.loss, p.lr,
                    format_duration(p.eta_seconds).c_str());
      std::string bar = text;
      if (p.val_loss) {
        record["val_loss"] = *p.val_loss;
        char val[64];
        std::snprintf(val, sizeof val, "  val %.4f", *p.val_loss);
        bar += val;
      }
      progress.update(static_cast<double>(p.step) / p.steps, bar, record);
    };
    hooks.should_stop = [] { return stop_signal() != 0; };
    catch_stop_signals();

    TrainSummary s;
    std::string dir = resume;
    if (!resume.empty()) {
      if (!o.corpus.empty() || !o.out_dir.empty()) {
        throw Error(ExitCode::kUsage,
                    "train: --resume DIR takes the corpus and options from DIR/checkpoint.json; "
                    "give no corpus or --output with it");
      }
      // --steps with --resume moves the run's end (a warmup-stable-decay run
      // decays over the new total's last --decay-fraction).
      s = resume_training(resume, hooks, threads > 0 ? std::optional<int>(threads) : std::nullopt,
                          steps_option->count() > 0 ? std::optional<int>(o.steps) : std::nullopt);
    } else {
      if (from.empty()) {
        finish_options();
      } else {
        take_shape_from_model();
      }
      dir = o.out_dir;
      s = train(o, hooks);
    }
    progress.finish();
    if (!primary) return s.stopped ? kInterrupted : 0;
    if (s.stopped) {
      progress.message("interrupted at step " + std::to_string(s.steps_done) +
                       "; saved; continue with: nextword train --resume " + dir);
    }
    nlohmann::ordered_json summary = {
        {"model", dir},
        {"parameters", s.parameters},
        {"vocab_size", s.vocab_size},
        {"documents", s.documents},
        {"train_tokens", s.train_tokens},
        {"val_tokens", s.val_tokens},
        {"steps", s.steps_done},
        {"completed", !s.stopped},
        {"loss", s.loss},
        {"val_loss", s.val_loss ? nlohmann::json(*s.val_loss) : nullptr},
        {"seconds", std::round(s.seconds * 10) / 10},
        {"tokens_per_s", std::round(s.tokens_per_second)}};
    if (format == "json") {
      write_line(summary.dump());
    } else {
      char text[400];
      std::snprintf(text, sizeof text,
                    "%s: %lld parameters, vocabulary %d, %d steps in %s (%.0f tokens/s), loss %.4f",
                    dir.c_str(), static_cast<long long>(s.parameters), s.vocab_size, s.steps_done,
                    format_duration(s.seconds).c_str(), s.tokens_per_second, s.loss);
      std::string line = text;
      if (s.val_loss) {
        std::snprintf(text, sizeof text, ", validation loss %.4f", *s.val_loss);
        line += text;
      }
      write_line(line);
    }
    return s.stopped ? kInterrupted : 0;
  }
};

}  // namespace

CLI::App* add_train_command(CLI::App& app, std::function<int()>& run) {
  return add_command<TrainCommand>(
      app, "train", "Train a model on text files and write it as vocab.json + weights.json", run);
}

}  // namespace nextword::cli
