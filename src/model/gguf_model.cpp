#include "model/gguf_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <tuple>
#include <utility>

#include "base/error.h"
#include "base/quant_blocks.h"
#include "format/file_bytes.h"
#include "format/gguf.h"
#include "model/gguf_architectures.h"
#include "model/gguf_vocabulary.h"

namespace nextword {
namespace {

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

// Where a tensor of format v1's layout lies in the file.
struct Place {
  std::string gguf;  // the file's name for it
  const GgufTensorName* name;
};

// Each tensor of the architecture's table, by format v1's full name.
std::map<std::string, Place> places(const GgufArchitecture& a, int n_layers) {
  std::map<std::string, Place> by_ours;
  for (const GgufTensorName& t : a.tensors) {
    const std::string gguf(t.gguf), ours(t.ours);
    if (gguf.rfind("blk.N.", 0) != 0) {
      by_ours[ours] = {gguf, &t};
      continue;
    }
    for (int l = 0; l < n_layers; ++l) {
      by_ours["layers." + std::to_string(l) + "." + ours] = {
          "blk." + std::to_string(l) + "." + gguf.substr(6), &t};
    }
  }
  return by_ours;
}

// The element type a tensor is read as: F32, F16, BF16 or one of ggml's
// blocks (whose rows the container checked are whole blocks), every tensor
// in place; a block type's scales checked finite.
WeightType read_type(const GgufFile& g, const GgufTensor& t, const std::string& field) {
  static const std::pair<GgmlType, WeightType> kRead[] = {
      {GgmlType::kF32, WeightType::kF32},   {GgmlType::kF16, WeightType::kF16},
      {GgmlType::kBF16, WeightType::kBF16}, {GgmlType::kQ8_0, WeightType::kQ8_0},
      {GgmlType::kQ4_0, WeightType::kQ4_0}, {GgmlType::kQ4_1, WeightType::kQ4_1},
      {GgmlType::kQ5_0, WeightType::kQ5_0}, {GgmlType::kQ5_1, WeightType::kQ5_1},
      {GgmlType::kQ4_K, WeightType::kQ4_K}, {GgmlType::kQ5_K, WeightType::kQ5_K},
      {GgmlType::kQ6_K, WeightType::kQ6_K}};
  const auto* read = std::find_if(std::begin(kRead), std::end(kRead), [&](const auto& r) {
    return static_cast<uint32_t>(r.first) == t.type;
  });
  if (read == std::end(kRead)) {
    throw model_error(g.path(), field,
                      std::string("type ") + ggml_type_info(t.type).name +
                          " is not read here (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, "
                          "Q4_K, Q5_K and Q6_K tensors)");
  }
  // Each element where its type needs it (a general.alignment of 1 or 2
  // may leave a float at an odd address; a block's scales are halves).
  const size_t element = read->second == WeightType::kF32 ? 4 : 2;
  if (reinterpret_cast<uintptr_t>(t.data) % element != 0) {
    throw model_error(g.path(), field,
                      "its data is not aligned to " + std::to_string(element) +
                          " bytes (general.alignment " + std::to_string(g.alignment()) + ")");
  }
  if (is_block_type(read->second)) {
    const auto blocks = static_cast<size_t>(t.bytes / block_shape(read->second).bytes);
    const auto* bytes = reinterpret_cast<const char*>(t.data);
    if (const size_t bad = first_non_finite_block(read->second, bytes, blocks); bad < blocks) {
      throw model_error(g.path(), field,
                        "block " + std::to_string(bad) + " (of " + std::to_string(blocks) +
                            ") has a scale that is not finite");
    }
  }
  return read->second;
}

// Where a share of a fused tensor starts: `first` rows in (a matrix), or
// `first` elements (a vector, whose share must start on a whole block).
uint64_t share_offset(const GgufFile& g, const GgufTensor& t, uint64_t first,
                      const std::string& field) {
  if (t.dims.size() > 1) return first * (t.bytes / t.rows());
  const GgmlTypeInfo info = ggml_type_info(t.type);
  if (first % info.block != 0) {
    throw model_error(g.path(), field,
                      std::string("type ") + info.name + ": its shares of Q, K and V do not " +
                          "start on whole blocks");
  }
  return first / info.block * info.bytes;
}

// The dimensions of a tensor fusing Q, K and V whose share `part` is
// `dims`, and where that share starts (in rows, or elements of a vector).
std::pair<std::vector<uint64_t>, uint64_t> fused_dims(std::vector<uint64_t> dims, int part,
                                                      const Config& c) {
  const uint64_t widths[] = {static_cast<uint64_t>(c.q_width()), static_cast<uint64_t>(c.k_width()),
                             static_cast<uint64_t>(c.v_width())};
  const uint64_t first = part == 0 ? 0 : part == 1 ? widths[0] : widths[0] + widths[1];
  dims.back() = widths[0] + widths[1] + widths[2];
  return {dims, first};
}

// Llama 3's rope_freqs: a divisor of each pair's angle (data/FORMAT.md).
std::vector<float> rope_factors(const GgufFile& g, const Config& c) {
  const GgufTensor* t = g.tensor("rope_freqs.weight");
  if (t == nullptr || c.positional != Positional::kRope) return {};
  const std::string field = "tensors.rope_freqs.weight";
  const std::vector<uint64_t> dims = {static_cast<uint64_t>(c.d_k / 2)};
  if (t->dims != dims) {
    throw model_error(
        g.path(), field,
        "shape " + dims_text(t->dims) + ", the hyperparameters give " + dims_text(dims));
  }
  if (t->type != static_cast<uint32_t>(GgmlType::kF32)) {
    throw model_error(g.path(), field,
                      std::string("type ") + ggml_type_info(t->type).name + " is not read (F32)");
  }
  std::vector<float> factors(dims[0]);
  std::memcpy(factors.data(), t->data, factors.size() * sizeof(float));
  for (size_t i = 0; i < factors.size(); ++i) {
    if (!(factors[i] > 0) || !std::isfinite(factors[i])) {
      throw model_error(g.path(), field + "[" + std::to_string(i) + "]",
                        "must be a positive number, got " + std::to_string(factors[i]));
    }
  }
  return factors;
}

}  // namespace

Model gguf_model(const std::string& path) { return gguf_model(GgufFile::open(path)); }

Model gguf_model(std::shared_ptr<const GgufFile> file) {
  const GgufFile& g = *file;
  const std::string& path = g.path();
  const std::string arch_name(g.string("general.architecture"));
  const GgufArchitecture* arch = find_architecture(arch_name);
  if (arch == nullptr) {
    throw model_error(
        path, "metadata.general.architecture",
        "\"" + arch_name + "\" is not read (nextword reads " + architecture_names() + ")");
  }
  GgufVocabulary v = gguf_vocabulary(g);
  Config c = arch->config(g, v.vocab.size());
  check_config(c, path, [&](const std::string& field) {
    const char* key = field == "n_kv_heads" ? "attention.head_count_kv"
                      : field == "n_heads"  ? "attention.head_count"
                                            : "attention.key_length";  // d_k, d_v
    return "metadata." + arch_name + "." + key;
  });
  c.tied_classifier = g.tensor("output.weight") == nullptr;
  c.tokenizer = {false, false, TokenizerKind::kSentencepiece};
  c.rope_factors = rope_factors(g, c);

  // The tensors: each of format v1's layout, found by its GGUF name, its
  // shape and type checked.
  auto owner = std::make_shared<GgufOwner>();
  owner->file = file;
  owner->scores = std::move(v.scores);  // the weights' piece_scores, held once
  const std::map<std::string, Place> by_ours = places(*arch, c.n_layers);
  std::vector<TensorSpec> present;
  std::vector<Weights::TensorSource> sources;
  for (const TensorSpec& spec : layout_for(c)) {
    if (spec.name == "piece_scores") {
      present.push_back(spec);
      sources.push_back({owner->scores.data(), false, WeightType::kF32});
      continue;
    }
    const auto it = by_ours.find(spec.name);
    const GgufTensorName* name = it != by_ours.end() ? it->second.name : nullptr;
    const bool output_rows = name != nullptr && name->output_rows;
    const GgufTensor* t = name != nullptr ? g.tensor(it->second.gguf) : nullptr;
    std::vector<uint64_t> dims = file_dims(spec.shape, output_rows);
    uint64_t first = 0;  // of a fused tensor, the share's first row (or element)
    if (name != nullptr && name->part >= 0) std::tie(dims, first) = fused_dims(dims, name->part, c);
    if (t == nullptr) {
      if (spec.optional) continue;
      throw model_error(path, "tensors." + (name != nullptr ? it->second.gguf : spec.name),
                        "missing (the hyperparameters need shape " + dims_text(dims) + ")");
    }
    const std::string field = "tensors." + std::string(t->name);
    if (t->dims != dims) {
      throw model_error(
          path, field,
          "shape " + dims_text(t->dims) + ", the hyperparameters give " + dims_text(dims));
    }
    const WeightType type = read_type(g, *t, field);
    present.push_back(spec);
    sources.push_back({t->data + share_offset(g, *t, first, field), output_rows, type});
  }

  // The BOS a phrase's pieces follow, if any, and the unknown piece, if any.
  const PieceTokenizer& pieces = *v.tokenizer;
  const int unk = pieces.unk(), bos = pieces.add_bos() ? pieces.bos() : -1;
  c.unk_token = unk >= 0 ? std::string(v.vocab.word(unk)) : "";
  c.bos_token = bos >= 0 ? std::string(v.vocab.word(bos)) : "";
  Weights weights(c, std::move(present), std::move(sources), owner);
  const auto bytes = static_cast<int64_t>(g.file_size());
  return Model{ModelPaths{path, path, ""},
               0,
               bytes,
               std::move(c),
               std::move(v.vocab),
               std::move(weights),
               unk,
               bos,
               std::move(v.tokenizer),
               nullptr,
               std::move(file)};
}

}  // namespace nextword
