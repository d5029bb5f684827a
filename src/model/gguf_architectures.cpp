#include "model/gguf_architectures.h"

#include <cmath>
#include <cstdint>

#include "base/error.h"
#include "format/gguf.h"

namespace nextword {
namespace {

// llama.cpp's names (its LLM_TENSOR_NAMES) for the llama and qwen2
// architectures; the biases of Q, K and V are qwen2's (and read where a
// llama file has them, as llama.cpp does).
constexpr GgufTensorName kLlamaTensors[] = {
    {"token_embd.weight", "embedding", false},
    {"output_norm.weight", "final_norm.weight", false},
    {"output.weight", "classifier", false},
    {"blk.N.attn_norm.weight", "norm1.weight", false},
    {"blk.N.attn_q.weight", "attn.w_q", true},
    {"blk.N.attn_k.weight", "attn.w_k", true},
    {"blk.N.attn_v.weight", "attn.w_v", true},
    {"blk.N.attn_q.bias", "attn.b_q", false},
    {"blk.N.attn_k.bias", "attn.b_k", false},
    {"blk.N.attn_v.bias", "attn.b_v", false},
    {"blk.N.attn_output.weight", "attn.w_o", true},
    {"blk.N.ffn_norm.weight", "norm2.weight", false},
    {"blk.N.ffn_gate.weight", "ffn.w_gate", true},
    {"blk.N.ffn_up.weight", "ffn.w_in", true},
    {"blk.N.ffn_down.weight", "ffn.w_out", true},
};

// gpt2: Q, K and V in one tensor (and one bias), rows Q's, then K's, then V's.
constexpr GgufTensorName kGpt2Tensors[] = {
    {"token_embd.weight", "embedding", false},
    {"position_embd.weight", "position", false},
    {"output_norm.weight", "final_norm.weight", false},
    {"output_norm.bias", "final_norm.bias", false},
    {"output.weight", "classifier", false},
    {"blk.N.attn_norm.weight", "norm1.weight", false},
    {"blk.N.attn_norm.bias", "norm1.bias", false},
    {"blk.N.attn_qkv.weight", "attn.w_q", true, 0},
    {"blk.N.attn_qkv.weight", "attn.w_k", true, 1},
    {"blk.N.attn_qkv.weight", "attn.w_v", true, 2},
    {"blk.N.attn_qkv.bias", "attn.b_q", false, 0},
    {"blk.N.attn_qkv.bias", "attn.b_k", false, 1},
    {"blk.N.attn_qkv.bias", "attn.b_v", false, 2},
    {"blk.N.attn_output.weight", "attn.w_o", true},
    {"blk.N.attn_output.bias", "attn.b_o", false},
    {"blk.N.ffn_norm.weight", "norm2.weight", false},
    {"blk.N.ffn_norm.bias", "norm2.bias", false},
    {"blk.N.ffn_up.weight", "ffn.w_in", true},
    {"blk.N.ffn_up.bias", "ffn.b_in", false},
    {"blk.N.ffn_down.weight", "ffn.w_out", true},
    {"blk.N.ffn_down.bias", "ffn.b_out", false},
};

// An architecture's hyperparameters: `{arch}.NAME` keys, checked as they are read.
class Hyperparameters {
 public:
  Hyperparameters(const GgufFile& g, const char* arch) : g_(g), arch_(arch) {}
  std::string key(const char* name) const { return arch_ + "." + name; }
  int count(const char* name, uint64_t least, uint64_t most) const {
    return checked(name, g_.integer(key(name)), least, most);
  }
  int count(const char* name, uint64_t least, uint64_t most, uint64_t fallback) const {
    return checked(name, g_.integer(key(name), fallback), least, most);
  }
  float positive(const char* name, double fallback) const {
    const double x = g_.number(key(name), fallback);
    if (!(x > 0) || !std::isfinite(static_cast<float>(x))) {
      throw model_error(g_.path(), "metadata." + key(name),
                        "must be a positive number, got " + std::to_string(x));
    }
    return static_cast<float>(x);
  }
  Error error(const char* name, const std::string& what) const {
    return model_error(g_.path(), "metadata." + key(name), what);
  }

 private:
  int checked(const char* name, uint64_t n, uint64_t least, uint64_t most) const {
    if (n < least || n > most) {
      throw error(name, "must be between " + std::to_string(least) + " and " +
                            std::to_string(most) + ", got " + std::to_string(n));
    }
    return static_cast<int>(n);
  }
  const GgufFile& g_;
  std::string arch_;
};

// What every architecture's keys give: the sizes of the model and its heads
// (the rules between them are check_config's, model/config.h).
Config sizes(const Hyperparameters& h, int vocab_size) {
  Config c;
  c.vocab_size = vocab_size;
  c.d_model = h.count("embedding_length", 1, kMaxDimension);
  c.n_layers = h.count("block_count", 1, kMaxLayers);
  c.n_heads = h.count("attention.head_count", 1, kMaxDimension);
  c.n_kv_heads = h.count("attention.head_count_kv", 1, kMaxDimension, uint64_t(c.n_heads));
  if (c.d_model % c.n_heads != 0) {
    throw h.error("attention.head_count", std::to_string(c.n_heads) +
                                              " heads do not divide embedding_length " +
                                              std::to_string(c.d_model));
  }
  c.d_k = c.d_v = h.count("attention.key_length", 1, kMaxDimension,
                          static_cast<uint64_t>(c.d_model / c.n_heads));
  c.d_ff = h.count("feed_forward_length", 1, kMaxDimension);
  c.max_len = h.count("context_length", 1, kMaxDimension);
  return c;
}

// Rotary positions on every column of a head, pairs adjacent or halves.
void rotary(const Hyperparameters& h, Config& c, bool halves) {
  const int rotated = h.count("rope.dimension_count", 1, kMaxDimension, uint64_t(c.d_k));
  if (rotated != c.d_k) {
    throw h.error("rope.dimension_count", std::to_string(rotated) +
                                              ": rotary positions on part of a head (of " +
                                              std::to_string(c.d_k) + ") are not read");
  }
  c.positional = Positional::kRope;
  c.rope_theta = h.positive("rope.freq_base", 10000.0);
  c.rope_halves = halves;
}

Config llama_like(const GgufFile& g, int vocab_size, const char* arch, bool halves) {
  const Hyperparameters h(g, arch);
  Config c = sizes(h, vocab_size);
  c.activation = Activation::kSwiglu;
  rotary(h, c, halves);
  c.norm = Norm::kRmsNorm;
  c.norm_eps = h.positive("attention.layer_norm_rms_epsilon", 1e-5);
  return c;
}

Config llama_config(const GgufFile& g, int vocab_size) {
  return llama_like(g, vocab_size, "llama", false);
}

Config qwen2_config(const GgufFile& g, int vocab_size) {
  return llama_like(g, vocab_size, "qwen2", true);
}

Config gpt2_config(const GgufFile& g, int vocab_size) {
  const Hyperparameters h(g, "gpt2");
  Config c = sizes(h, vocab_size);
  c.activation = Activation::kGelu;
  c.positional = Positional::kLearned;
  c.norm = Norm::kLayerNorm;
  c.norm_eps = h.positive("attention.layer_norm_epsilon", 1e-5);
  return c;
}

constexpr GgufArchitecture kArchitectures[] = {
    {"llama", kLlamaTensors, llama_config},
    {"qwen2", kLlamaTensors, qwen2_config},
    {"gpt2", kGpt2Tensors, gpt2_config},
};

}  // namespace

const GgufArchitecture* find_architecture(std::string_view name) {
  for (const GgufArchitecture& a : kArchitectures) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

std::string architecture_names() {
  std::string names;
  for (const GgufArchitecture& a : kArchitectures) {
    names += (names.empty() ? "" : ", ") + std::string(a.name);
  }
  return names;
}

}  // namespace nextword
