// The model's hyperparameters: the "config" object of weights.json (format v1).
//
// Every field, its default and its meaning is documented in data/FORMAT.md;
// this struct is that table in C++.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace nextword {

// Every reader's limits (weights.json's config, GGUF's hyperparameters):
// sizes beyond these are refused before anything is allocated.
constexpr int64_t kMaxDimension = int64_t{1} << 20;
constexpr int64_t kMaxVocabulary = int64_t{1} << 24;
constexpr int64_t kMaxLayers = 1024;

enum class Positional { kNone, kLearned, kSinusoidal, kRope };
enum class Norm { kNone, kLayerNorm, kRmsNorm };
enum class Activation { kGelu, kRelu, kSwiglu, kRelu2 };
enum class Scale { kSqrtDk, kNone };

struct Config {
  int vocab_size = 0;
  int d_model = 0;
  int n_layers = 0;
  int n_heads = 0;
  int n_kv_heads = 0;                         // key/value heads dividing n_heads; 0: n_heads
  int d_k = 0;                                // per head
  int d_v = 0;                                // per head
  int d_ff = 0;                               // 0: no feedforward block
  Activation activation = Activation::kGelu;  // kSwiglu: act(x) = silu(U W_gate) * (U W_in)
  int max_len = 0;
  Positional positional = Positional::kNone;
  float rope_theta = 10000.0f;      // kRope: pair i of a head turns by p * rope_theta^(-2i/d_k)
  bool rope_halves = false;         // kRope: pair i is columns (i, i + d_k/2), not (2i, 2i+1)
  std::vector<float> rope_factors;  // kRope: d_k/2 divisors of the pairs' angles; empty: 1
  Norm norm = Norm::kNone;
  float norm_eps = 1e-5f;
  bool qk_norm = false;  // each head's q and k divided by their root mean square (FORMAT.md)
  bool residual = true;
  bool causal = true;
  Scale scale = Scale::kSqrtDk;
  bool tied_classifier = false;
  // The adaptive softmax (Grave et al. 2017), when adaptive_cutoffs is not
  // empty: words [0, c_1) are the head's, each [c_i, c_{i+1}) (c_{n+1} = V)
  // a cluster behind a projection of width d / adaptive_div^i (FORMAT.md).
  std::vector<int> adaptive_cutoffs;
  float adaptive_div = 4.0f;
  TokenizerOptions tokenizer;
  std::string unk_token = "<unk>";
  std::string bos_token;  // empty: no beginning-of-sequence token

  bool has_bos() const { return !bos_token.empty(); }
  // The vocabulary is sentencepiece's subword pieces (text/subword.h), not words.
  bool subword() const { return tokenizer.kind == TokenizerKind::kSentencepiece; }
  // Widths of attention's columns: the queries (h * d_k), the keys (kv * d_k)
  // and values (kv * d_v) of the kv heads, the heads' concatenation
  // (h * d_v), and one row of [Q | K | V]. Query head i reads kv head
  // i / kv_group().
  int kv_heads() const { return n_kv_heads > 0 ? n_kv_heads : n_heads; }
  int kv_group() const { return n_heads / kv_heads(); }
  int q_width() const { return n_heads * d_k; }
  int k_width() const { return kv_heads() * d_k; }
  int v_width() const { return kv_heads() * d_v; }
  int heads_width() const { return n_heads * d_v; }
  int qkv_width() const { return q_width() + k_width() + v_width(); }
  bool gated() const { return activation == Activation::kSwiglu; }
  // Positions are added to the embeddings (learned, sinusoidal), not turned
  // into Q and K (rope) or absent.
  bool adds_positions() const {
    return positional == Positional::kLearned || positional == Positional::kSinusoidal;
  }
  // The norm has a bias (layernorm), not only a gain (rmsnorm).
  bool norm_has_bias() const { return norm == Norm::kLayerNorm; }
  float attention_scale() const;  // s in softmax(Q K^T * s)

  // The adaptive softmax's shape (all of it follows from the cutoffs).
  bool adaptive() const { return !adaptive_cutoffs.empty(); }
  int clusters() const { return static_cast<int>(adaptive_cutoffs.size()); }
  // Words of the head: the first cutoff, or the whole vocabulary without clusters.
  int head_words() const { return adaptive() ? adaptive_cutoffs[0] : vocab_size; }
  // Outputs of the head: its words, then one per cluster.
  int head_size() const { return head_words() + clusters(); }
  // Cluster i's first word, its number of words and its projection's width.
  int cluster_start(int i) const { return adaptive_cutoffs[static_cast<size_t>(i)]; }
  int cluster_words(int i) const;
  int cluster_width(int i) const;
};

// Reads and validates the "config" object; `file` names weights.json in errors.
Config parse_config(const nlohmann::json& config, const std::string& file);

// The rules between a config's fields that every reader keeps, whichever
// file the config came from (weights.json's config, llama2.c's header, a
// GGUF file's hyperparameters): key/value heads that divide the heads,
// widths of heads within kMaxDimension, d_k even with rotary positions,
// d_k / 2 rope_factors. Throws model_error(file, field_name(FIELD), what),
// FIELD the config's name ("n_kv_heads"), field_name giving the file's.
using FieldName = std::function<std::string(const std::string& field)>;
void check_config(const Config& config, const std::string& file, const FieldName& field_name);

// The config as it would be written back (every field, defaults included).
nlohmann::ordered_json config_to_json(const Config& config);

const char* to_string(Positional p);
const char* to_string(Norm n);
const char* to_string(Activation a);
const char* to_string(Scale s);

}  // namespace nextword
