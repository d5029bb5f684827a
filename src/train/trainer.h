// Training a model from text: vocabulary, initialization, mini-batches of
// fixed-length windows, AdamW with warmup and cosine decay, gradient
// clipping, dropout, validation, checkpoints and exact resume.
//
// Every random choice (initial weights, which windows make up step s's batch,
// the dropout masks of step s) is a pure function of (seed, step, index), so a
// run is reproducible at a given thread count and a resumed run continues
// exactly where the checkpoint stopped.
//
// Under `mpirun -np R` (data_parallel.h) every rank takes B/R windows of each
// step's batch; the gradients are summed over the ranks and every rank takes
// the same update, so the weights are those of one process on the whole batch.
// Within a process, --threads W splits a rank's windows the same way over W
// worker threads, each running whole forward and backward passes in buffers
// of its own (OpenBLAS single-threaded), whose gradients are then added in
// worker order: R ranks of W threads train exactly as R*W ranks of one.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/model_file.h"
#include "text/documents.h"
#include "train/adamw.h"
#include "train/muon.h"

namespace nextword {

struct TrainOptions {
  std::vector<std::string> corpus;  // text files
  std::string out_dir;              // vocab.json, weights.json, checkpoint.json
  Config model;                     // the shape (vocab_size is set from the corpus)
  int vocab_size = 4096;            // largest vocabulary, <unk> and <bos> included
  bool attention_bias = false;      // train the optional b_q, b_k, b_v, b_o
  bool ffn_bias = true;             // train the optional b_in, b_out (and b_gate with swiglu)
  bool classifier_bias = false;     // train the optional classifier_bias
  int batch = 32;                   // windows per step, over every rank
  bool document_windows = false;    // windows start at documents' starts (their bos), not anywhere
  bool shuffle = false;             // epochs of every start once, in a fresh order each (corpus.h)
  int steps = 2000;
  int warmup = 100;      // steps of linear warmup
  float lr = 2e-3f;      // peak learning rate
  float min_lr = 2e-4f;  // where the decay ends
  // "cosine": from lr to min_lr over every step after the warmup. "wsd"
  // (warmup-stable-decay): lr until the last decay_fraction of the steps,
  // then a straight line down to min_lr at the last step.
  std::string schedule = "cosine";
  float decay_fraction = 0.2f;
  // A model whose vocabulary and weights a fresh run starts from instead of
  // the text's most frequent words and random weights (its shape must be
  // the run's, tensor for tensor; --vocab-size is then its). Empty: none.
  std::string init_from;
  float weight_decay = 0.1f;  // on matrices only
  AdamWOptions adamw;
  // "adamw" for every tensor, or "muon": Muon (train/muon.h) for the layers'
  // matrices, AdamW for the rest.
  std::string optimizer = "adamw";
  MuonOptions muon;
  float clip = 1.0f;  // largest gradient norm (0: no clipping)
  float dropout = 0.1f;
  // Distillation: a model of the same vocabulary whose next-word
  // distributions the run learns too, with loss (1 - teacher_weight) CE +
  // teacher_weight * temperature^2 * KL(teacher || student). Empty: none.
  std::string teacher;
  float teacher_weight = 0.5f;
  float temperature = 2.0f;
  float init_std = 0.02f;
  // The projections into the residual stream (w_o, w_out) start at zero, so
  // that every block starts as the identity (modded-nanogpt's recipe).
  bool zero_init_projections = false;
  double val_fraction = 0.05;
  int eval_every = 200;  // steps between validation losses (0: only at the end)
  int log_every = 10;
  int checkpoint_every = 500;  // 0: only at the end; -1: none, the model alone at the end
  uint64_t seed = 1;
  int threads = 0;    // worker threads; 0: every core (one per rank under mpirun)
  bool bf16 = false;  // training's products in bf16 (math/training_products.h)
};

// What the trainer reports as it goes.
struct TrainProgress {
  int step = 0;  // steps done
  int steps = 0;
  double loss = 0;  // mean training loss since the last report
  std::optional<double> val_loss;
  double lr = 0;
  double grad_norm = 0;
  double tokens_per_second = 0;
  double elapsed_seconds = 0;
  double eta_seconds = 0;
};

struct TrainSummary {
  int64_t parameters = 0;
  int vocab_size = 0;
  int64_t documents = 0, train_tokens = 0, val_tokens = 0;
  double unknown_rate = 0;
  int steps_done = 0;
  bool stopped = false;  // interrupted (should_stop) before the last step
  double loss = 0;
  std::optional<double> val_loss;
  double seconds = 0;
  double tokens_per_second = 0;
};

// Called on rank 0 only under mpirun (the other ranks print nothing).
struct TrainHooks {
  std::function<void(const std::string&)> on_start;  // one line about the data and model
  std::function<void(const TrainProgress&)> on_progress;
  std::function<bool()> should_stop;  // checked at every step (Ctrl-C), on every rank
};

// Throws Error(kUsage) naming the first option out of its range.
void check_options(const TrainOptions& options);

// A fresh run. Throws Error (kUsage for bad options, kIo for files).
TrainSummary train(const TrainOptions& options, const TrainHooks& hooks);
// The same on documents already read (options.corpus is then only a record,
// and the run cannot be resumed: give it checkpoint_every -1).
TrainSummary train(const TrainOptions& options, const std::vector<Document>& documents,
                   const TrainHooks& hooks);

// Continues the run whose checkpoint is in `dir`, with the options it was
// started with (the corpus files must be unchanged, and the number of ranks);
// `steps`, when given, is its new total (at least the steps done).
TrainSummary resume_training(const std::string& dir, const TrainHooks& hooks,
                             std::optional<int> threads, std::optional<int> steps = std::nullopt);

}  // namespace nextword
