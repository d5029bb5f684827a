#include "model/gguf_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include "base/error.h"
#include "format/file_bytes.h"
#include "format/gguf.h"
#include "model/gguf_vocabulary.h"

namespace nextword {
namespace {

// One tensor of an architecture: GGUF's name ("blk.N." for each layer's)
// and format v1's, and whether the file holds it as rows of outputs ([out,
// in], every projection) rather than in the math's layout (vectors, and
// the embedding and classifier, whose rows are words in both).
struct TensorName {
  const char* gguf;
  const char* ours;
  bool output_rows;
};

// llama.cpp's names for the llama architecture (its LLM_TENSOR_NAMES).
constexpr TensorName kLlamaTensors[] = {
    {"token_embd.weight", "embedding", false},
    {"output_norm.weight", "final_norm.weight", false},
    {"output.weight", "classifier", false},
    {"blk.N.attn_norm.weight", "norm1.weight", false},
    {"blk.N.attn_q.weight", "attn.w_q", true},
    {"blk.N.attn_k.weight", "attn.w_k", true},
    {"blk.N.attn_v.weight", "attn.w_v", true},
    {"blk.N.attn_output.weight", "attn.w_o", true},
    {"blk.N.ffn_norm.weight", "norm2.weight", false},
    {"blk.N.ffn_gate.weight", "ffn.w_gate", true},
    {"blk.N.ffn_up.weight", "ffn.w_in", true},
    {"blk.N.ffn_down.weight", "ffn.w_out", true},
};

class Hyperparameters {
 public:
  Hyperparameters(const GgufFile& g, std::string arch) : g_(g), arch_(std::move(arch)) {}
  std::string key(const char* name) const { return arch_ + "." + name; }
  int count(const char* name, uint64_t least, uint64_t most) const {
    const uint64_t n = g_.integer(key(name));
    return checked(name, n, least, most);
  }
  int count(const char* name, uint64_t least, uint64_t most, uint64_t fallback) const {
    const uint64_t n = g_.integer(key(name), fallback);
    return checked(name, n, least, most);
  }
  float positive(const char* name, double fallback) const {
    const double x = g_.number(key(name), fallback);
    if (!(x > 0) || !std::isfinite(static_cast<float>(x))) {
      throw model_error(g_.path(), "metadata." + key(name),
                        "must be a positive number, got " + std::to_string(x));
    }
    return static_cast<float>(x);
  }

 private:
  int checked(const char* name, uint64_t n, uint64_t least, uint64_t most) const {
    if (n < least || n > most) {
      throw model_error(g_.path(), "metadata." + key(name),
                        "must be between " + std::to_string(least) + " and " +
                            std::to_string(most) + ", got " + std::to_string(n));
    }
    return static_cast<int>(n);
  }
  const GgufFile& g_;
  std::string arch_;
};

Config llama_config(const GgufFile& g, int vocab_size) {
  const Hyperparameters h(g, "llama");
  Config c;
  c.vocab_size = vocab_size;
  c.d_model = h.count("embedding_length", 1, kMaxDimension);
  c.n_layers = h.count("block_count", 1, kMaxLayers);
  c.n_heads = h.count("attention.head_count", 1, kMaxDimension);
  c.n_kv_heads = h.count("attention.head_count_kv", 1, kMaxDimension, uint64_t(c.n_heads));
  if (c.n_heads % c.n_kv_heads != 0) {
    throw model_error(g.path(), "metadata." + h.key("attention.head_count_kv"),
                      std::to_string(c.n_kv_heads) + " does not divide the " +
                          std::to_string(c.n_heads) + " heads");
  }
  if (c.d_model % c.n_heads != 0) {
    throw model_error(g.path(), "metadata." + h.key("attention.head_count"),
                      std::to_string(c.n_heads) + " heads do not divide embedding_length " +
                          std::to_string(c.d_model));
  }
  c.d_k = c.d_v = h.count("attention.key_length", 2, kMaxDimension,
                          static_cast<uint64_t>(c.d_model / c.n_heads));
  if (c.d_k % 2 != 0 || int64_t{c.n_heads} * c.d_k > int64_t{kMaxDimension}) {
    throw model_error(g.path(), "metadata." + h.key("attention.key_length"),
                      std::to_string(c.d_k) + " is odd or too wide for rotary positions");
  }
  const int rotated = h.count("rope.dimension_count", 1, kMaxDimension, uint64_t(c.d_k));
  if (rotated != c.d_k) {
    throw model_error(g.path(), "metadata." + h.key("rope.dimension_count"),
                      std::to_string(rotated) + ": rotary positions on part of a head (of " +
                          std::to_string(c.d_k) + ") are not read");
  }
  c.d_ff = h.count("feed_forward_length", 1, kMaxDimension);
  c.activation = Activation::kSwiglu;
  c.max_len = h.count("context_length", 1, kMaxDimension);
  c.positional = Positional::kRope;
  c.rope_theta = h.positive("rope.freq_base", 10000.0);
  c.norm = Norm::kRmsNorm;
  c.norm_eps = h.positive("attention.layer_norm_rms_epsilon", 1e-5);
  c.tied_classifier = g.tensor("output.weight") == nullptr;
  c.tokenizer = {false, false, TokenizerKind::kSentencepiece};
  return c;
}

// The ggml dimensions a tensor of format v1's `shape` has in the file.
std::vector<uint64_t> file_dims(const std::vector<int64_t>& shape, bool output_rows) {
  if (shape.size() == 1) return {static_cast<uint64_t>(shape[0])};
  // [in, out] as rows of outputs: out rows of in (ne = {in, out}); a
  // matrix of word rows [V, d]: V rows of d (ne = {d, V}).
  if (output_rows) return {static_cast<uint64_t>(shape[0]), static_cast<uint64_t>(shape[1])};
  return {static_cast<uint64_t>(shape[1]), static_cast<uint64_t>(shape[0])};
}

// Dimensions as weights.json's messages write shapes ("[64,32]").
std::string dims_text(const std::vector<uint64_t>& dims) {
  return shape_text(std::vector<int64_t>(dims.begin(), dims.end()));
}

// What keeps a model's tensors alive: the file, and the few small vectors
// that are not tensors in it (the pieces' scores).
struct GgufOwner {
  std::shared_ptr<const GgufFile> file;
  std::vector<float> scores;
};

}  // namespace

Model gguf_model(const std::string& path) { return gguf_model(GgufFile::open(path)); }

Model gguf_model(std::shared_ptr<const GgufFile> file) {
  const GgufFile& g = *file;
  const std::string& path = g.path();
  const std::string arch(g.string("general.architecture"));
  if (arch != "llama") {
    throw model_error(path, "metadata.general.architecture",
                      "\"" + arch + "\" is not read (nextword reads llama)");
  }
  GgufVocabulary v = gguf_vocabulary(g);
  const int V = v.vocab.size();
  Config c = llama_config(g, V);

  // The tensors: each of format v1's layout, found by its GGUF name, its
  // shape and type checked.
  auto owner = std::make_shared<GgufOwner>();
  owner->file = file;
  owner->scores = v.scores;
  std::map<std::string, std::pair<std::string, bool>> by_ours;  // ours -> (gguf name, output rows)
  for (const TensorName& t : kLlamaTensors) {
    const std::string gguf(t.gguf), ours(t.ours);
    if (gguf.rfind("blk.N.", 0) != 0) {
      by_ours[ours] = {gguf, t.output_rows};
      continue;
    }
    for (int l = 0; l < c.n_layers; ++l) {
      by_ours["layers." + std::to_string(l) + "." + ours] = {
          "blk." + std::to_string(l) + "." + gguf.substr(6), t.output_rows};
    }
  }
  std::vector<TensorSpec> present;
  std::vector<Weights::TensorSource> sources;
  for (const TensorSpec& spec : layout_for(c)) {
    if (spec.name == "piece_scores") {
      present.push_back(spec);
      sources.push_back({owner->scores.data(), false, WeightType::kF32});
      continue;
    }
    const auto it = by_ours.find(spec.name);
    const bool named = it != by_ours.end();
    const bool output_rows = named && it->second.second;
    const GgufTensor* t = named ? g.tensor(it->second.first) : nullptr;
    if (t == nullptr) {
      if (spec.optional) continue;
      throw model_error(path, "tensors." + (named ? it->second.first : spec.name),
                        "missing (the hyperparameters need shape " +
                            dims_text(file_dims(spec.shape, output_rows)) + ")");
    }
    const std::string field = "tensors." + std::string(t->name);
    const std::vector<uint64_t> dims = file_dims(spec.shape, output_rows);
    if (t->dims != dims) {
      throw model_error(
          path, field,
          "shape " + dims_text(t->dims) + ", the hyperparameters give " + dims_text(dims));
    }
    // Every tensor in F32, F16, BF16 or Q8_0 (whose rows the container
    // checked are whole blocks of 32), read in place.
    const auto type = static_cast<GgmlType>(t->type);
    const WeightType read = type == GgmlType::kF16    ? WeightType::kF16
                            : type == GgmlType::kBF16 ? WeightType::kBF16
                            : type == GgmlType::kQ8_0 ? WeightType::kQ8_0
                                                      : WeightType::kF32;
    if (read == WeightType::kF32 && type != GgmlType::kF32) {
      throw model_error(path, field,
                        std::string("type ") + ggml_type_info(t->type).name +
                            " is not read here (F32, F16, BF16 and Q8_0 tensors)");
    }
    // Each element where its type needs it (a general.alignment of 1 or 2
    // may leave a float at an odd address; a Q8_0 block's scale is a half).
    const size_t element = read == WeightType::kF32 ? 4 : 2;
    if (reinterpret_cast<uintptr_t>(t->data) % element != 0) {
      throw model_error(path, field,
                        "its data is not aligned to " + std::to_string(element) +
                            " bytes (general.alignment " + std::to_string(g.alignment()) + ")");
    }
    present.push_back(spec);
    sources.push_back({t->data, output_rows, read});
  }

  c.unk_token = std::string(v.vocab.word(v.unk));
  c.bos_token = std::string(v.vocab.word(v.bos));
  Weights weights(c, std::move(present), std::move(sources), owner);
  const auto bytes = static_cast<int64_t>(g.file_size());
  return Model{ModelPaths{path, path, ""},
               0,
               bytes,
               std::move(c),
               std::move(v.vocab),
               std::move(weights),
               v.unk,
               v.bos,
               std::move(v.tokenizer),
               nullptr,
               std::move(file)};
}

}  // namespace nextword
