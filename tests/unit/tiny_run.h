// A tiny corpus and a tiny training run, for the trainer and checkpoint tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "temp_dir.h"
#include "train/trainer.h"

namespace nextword::testing {

// Sentences of a tiny grammar, "the cat sat on the mat ." and its variations,
// paragraphs separated by blank lines: 60 documents of 42 tokens. The next
// word is certain at 4 of 7 positions and one of two at the other 3.
inline std::string write_text(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/text.txt";
  std::ofstream out(path);
  std::mt19937 rng(3);
  const char* animals[] = {"cat", "dog"};
  const char* verbs[] = {"sat", "slept"};
  const char* things[] = {"mat", "rug"};
  for (int paragraph = 0; paragraph < 60; ++paragraph) {
    for (int sentence = 0; sentence < 6; ++sentence) {
      out << "The " << animals[rng() % 2] << " " << verbs[rng() % 2] << " on the "
          << things[rng() % 2] << ". ";
    }
    out << "\n\n";
  }
  return path;
}

// That text in a directory of this process's own (other checkouts may run
// these tests at the same time), removed afterwards.
struct TinyText {
  TempDir tmp;
  std::string dir = tmp.dir.string();
  std::string path = write_text(dir);
};

inline TrainOptions tiny_options(const std::string& text, const std::string& out) {
  TrainOptions o;
  o.corpus = {text};
  o.out_dir = out;
  o.vocab_size = 64;
  o.model.d_model = 16;
  o.model.n_layers = 1;
  o.model.n_heads = 2;
  o.model.d_k = 8;
  o.model.d_v = 8;
  o.model.d_ff = 32;
  o.model.max_len = 12;
  o.model.positional = Positional::kLearned;
  o.model.norm = Norm::kLayerNorm;
  o.model.tied_classifier = true;
  o.model.bos_token = "<bos>";
  o.batch = 8;
  o.steps = 150;
  o.warmup = 10;
  o.lr = 1e-2f;
  o.min_lr = 1e-3f;
  o.dropout = 0.0f;
  o.val_fraction = 0.1;
  o.eval_every = 0;
  o.checkpoint_every = 0;
  o.threads = 1;
  return o;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace nextword::testing
