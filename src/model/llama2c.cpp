#include "model/llama2c.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>

#include "base/error.h"
#include "format/binary_fields.h"
#include "format/file_bytes.h"
#include "model/weights_file.h"
#include "text/utf8.h"

namespace nextword {
namespace {

constexpr uint32_t kMagic = 0x616b3432;  // "ak42"
constexpr size_t kVersionedHeader = 256;
constexpr size_t kLegacyHeader = 28;
// The sizes format v1 takes (config.cpp); a larger header field is refused
// before anything is computed from it.
constexpr int64_t kMostWidth = int64_t{1} << 20;
constexpr int64_t kMostVocabulary = int64_t{1} << 24;
constexpr int64_t kMostLayers = 1024;
// A tokenizer.bin of 2^24 pieces of up to 64 KiB would be larger; llama2.c's
// 32,000-piece one is 424 KB.
constexpr size_t kMostTokenizerBytes = size_t{1} << 30;

struct Header {
  int version = 0;
  int64_t dim = 0, hidden_dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, vocab_size = 0,
          seq_len = 0;
  bool shared = true;
  int64_t group_size = 0;  // version 2
  size_t size = 0;         // bytes before the first tensor
};

Header read_header(std::string_view bytes, const std::string& file) {
  Header h;
  const bool versioned = bytes.size() >= 4 && read_field<uint32_t>(bytes.data()) == kMagic;
  h.size = versioned ? kVersionedHeader : kLegacyHeader;
  if (bytes.size() < h.size) {
    throw model_error(file, "header",
                      "the file has " + std::to_string(bytes.size()) + " bytes, fewer than the " +
                          std::to_string(h.size) + " of a version " + (versioned ? "1/2" : "0") +
                          " header");
  }
  const char* p = bytes.data();
  if (versioned) {
    h.version = read_field<int32_t>(p + 4);
    if (h.version != 1 && h.version != 2) {
      throw model_error(file, "header.version",
                        "unsupported version " + std::to_string(h.version) +
                            " (llama2.c's versions 0, 1 and 2 are read)");
    }
    p += 8;
  }
  int64_t* fields[] = {&h.dim,        &h.hidden_dim, &h.n_layers, &h.n_heads,
                       &h.n_kv_heads, &h.vocab_size, &h.seq_len};
  for (int64_t* field : fields) {
    *field = read_field<int32_t>(p);
    p += 4;
  }
  if (versioned) {
    h.shared = static_cast<unsigned char>(*p) != 0;
    if (static_cast<unsigned char>(*p) > 1) {
      throw model_error(file, "header.shared_classifier",
                        "must be 0 or 1, got " + std::to_string(static_cast<unsigned char>(*p)));
    }
    if (h.version == 2) h.group_size = read_field<int32_t>(p + 1);
  } else {
    // Version 0 says "not shared" with a negative vocab_size.
    h.shared = h.vocab_size > 0;
    if (h.vocab_size < 0) h.vocab_size = -h.vocab_size;
  }
  auto check = [&](const char* name, int64_t value, int64_t most) {
    if (value < 1 || value > most) {
      throw model_error(file, std::string("header.") + name,
                        "must be 1 to " + std::to_string(most) + ", got " + std::to_string(value));
    }
  };
  check("dim", h.dim, kMostWidth);
  check("hidden_dim", h.hidden_dim, kMostWidth);
  check("n_layers", h.n_layers, kMostLayers);
  check("n_heads", h.n_heads, h.dim);
  check("n_kv_heads", h.n_kv_heads, h.n_heads);
  check("vocab_size", h.vocab_size, kMostVocabulary);
  check("seq_len", h.seq_len, kMostWidth);
  if (h.version == 2) check("group_size", h.group_size, kMostWidth);
  if (h.dim % h.n_heads != 0) {
    throw model_error(
        file, "header.n_heads",
        std::to_string(h.n_heads) + " heads do not divide dim " + std::to_string(h.dim));
  }
  return h;
}

// One llama2.c tensor after another from `at` on, as float32 (version 2's
// int8 groups multiplied out). Every size is checked before it is read.
class TensorReader {
 public:
  TensorReader(std::string_view bytes, const std::string& file, const Header& h)
      : bytes_(bytes), file_(file), at_(h.size), group_(h.group_size) {}

  // `n` floats of the tensor `name` (float32 even in version 2 when `plain`).
  const std::vector<float>& take(const std::string& name, int64_t n, bool plain) {
    const auto count = static_cast<size_t>(n);
    values_.resize(count);
    if (group_ == 0 || plain) {
      need(name, count * 4);
      std::memcpy(values_.data(), bytes_.data() + at_, count * 4);
      at_ += count * 4;
    } else {
      const auto group = static_cast<size_t>(group_);
      if (count % group != 0) {
        throw model_error(file_, name,
                          std::to_string(count) + " values are not whole groups of group_size " +
                              std::to_string(group));
      }
      need(name, count + count / group * 4);
      const auto* q = reinterpret_cast<const int8_t*>(bytes_.data() + at_);
      const char* scales = bytes_.data() + at_ + count;
      for (size_t g = 0; g < count / group; ++g) {
        const auto scale = read_field<float>(scales + g * 4);
        for (size_t i = g * group; i < (g + 1) * group; ++i) values_[i] = q[i] * scale;
      }
      at_ += count + count / group * 4;
    }
    if (const size_t bad = first_non_finite(values_.data(), count); bad < count) {
      throw model_error(file_, name, "element " + std::to_string(bad) + " is not finite");
    }
    return values_;
  }

  void skip(const std::string& name, int64_t floats) {
    need(name, static_cast<size_t>(floats) * 4);
    at_ += static_cast<size_t>(floats) * 4;
  }

  void finish() const {
    if (at_ != bytes_.size()) {
      throw model_error(file_, "",
                        std::to_string(bytes_.size() - at_) +
                            " bytes after the last tensor (the header's shapes end at byte " +
                            std::to_string(at_) + ")");
    }
  }

 private:
  void need(const std::string& name, size_t n) const {
    if (bytes_.size() - at_ < n) {
      throw model_error(file_, name,
                        "needs " + std::to_string(n) + " bytes from byte " + std::to_string(at_) +
                            ", the file ends at byte " + std::to_string(bytes_.size()));
    }
  }

  std::string_view bytes_;
  const std::string& file_;
  size_t at_;
  int64_t group_;
  std::vector<float> values_;
};

Config config_of(const Header& h) {
  Config c;
  c.vocab_size = static_cast<int>(h.vocab_size);
  c.d_model = static_cast<int>(h.dim);
  c.n_layers = static_cast<int>(h.n_layers);
  c.n_heads = static_cast<int>(h.n_heads);
  c.n_kv_heads = static_cast<int>(h.n_kv_heads);
  c.d_k = c.d_v = static_cast<int>(h.dim / h.n_heads);
  c.d_ff = static_cast<int>(h.hidden_dim);
  c.activation = Activation::kSwiglu;
  c.max_len = static_cast<int>(h.seq_len);
  c.positional = Positional::kRope;
  c.norm = Norm::kRmsNorm;
  c.tied_classifier = h.shared;
  c.tokenizer = {false, false, TokenizerKind::kSentencepiece};
  c.unk_token = "<unk>";
  return c;
}

}  // namespace

Llama2cCheckpoint read_llama2c(std::string_view bytes, const std::string& file) {
  const Header h = read_header(bytes, file);
  Llama2cCheckpoint out{h.version, config_of(h), {}};
  // d_k is dim / n_heads here: the header's fields are the ones at fault.
  check_config(out.config, file, [](const std::string& field) {
    return field == "n_kv_heads" ? std::string("header.n_kv_heads") : std::string("header.n_heads");
  });
  const Config& c = out.config;
  // The whole file's size, from the header alone, before anything is allocated.
  const int64_t d = h.dim, L = h.n_layers, V = h.vocab_size, ff = h.hidden_dim;
  const int64_t kv = h.n_kv_heads * (h.dim / h.n_heads), head_half = h.dim / h.n_heads / 2;
  const int64_t matrices =
      V * d + L * (2 * d * d + 2 * d * kv + 3 * d * ff) + (h.shared ? 0 : V * d);
  const int64_t norms = L * 2 * d + d;
  int64_t expected = static_cast<int64_t>(h.size) + 4 * norms;
  if (h.version == 2) {
    expected += matrices + 4 * (matrices / h.group_size);  // when every tensor is whole groups
  } else {
    expected += 4 * matrices + (h.version == 0 ? 4 * 2 * h.seq_len * head_half : 0);
  }
  if (static_cast<int64_t>(bytes.size()) < expected) {
    throw model_error(file, "",
                      "has " + std::to_string(bytes.size()) + " bytes; its header's shapes need " +
                          std::to_string(expected));
  }

  out.weights = Weights(c, layout_for(c));
  Weights& w = out.weights;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < w.tensors().size(); ++i) index[w.tensors()[i].name] = i;
  auto tensor = [&](const std::string& name) { return w.mutable_data(index.at(name)); };
  TensorReader in(bytes, file, h);
  // Copies `name` as it is (embeddings, norms, the classifier), or each
  // layer's [out, in] matrix transposed into format v1's [in, out].
  auto copy = [&](const std::string& name, const std::string& ours, int64_t n, bool plain) {
    const std::vector<float>& x = in.take(name, n, plain);
    std::copy(x.begin(), x.end(), tensor(ours));
  };
  auto per_layer = [&](const char* name, const char* ours, int64_t n, bool plain) {
    for (int64_t l = 0; l < L; ++l) {
      copy(std::string(name) + "[" + std::to_string(l) + "]",
           "layers." + std::to_string(l) + "." + ours, n, plain);
    }
  };
  auto matrix = [&](const char* name, const char* ours, int64_t out_width, int64_t in_width) {
    for (int64_t l = 0; l < L; ++l) {
      const std::vector<float>& x =
          in.take(std::string(name) + "[" + std::to_string(l) + "]", out_width * in_width, false);
      float* y = tensor("layers." + std::to_string(l) + "." + ours);
      for (int64_t o = 0; o < out_width; ++o) {
        for (int64_t i = 0; i < in_width; ++i) y[i * out_width + o] = x[o * in_width + i];
      }
    }
  };
  auto projections = [&] {
    matrix("wq", "attn.w_q", d, d);
    matrix("wk", "attn.w_k", kv, d);
    matrix("wv", "attn.w_v", kv, d);
    matrix("wo", "attn.w_o", d, d);
  };
  auto feedforward = [&] {
    matrix("w1", "ffn.w_gate", ff, d);
    matrix("w2", "ffn.w_out", d, ff);
    matrix("w3", "ffn.w_in", ff, d);
  };
  if (h.version == 0) {
    copy("token_embedding_table", "embedding", V * d, false);
    per_layer("rms_att_weight", "norm1.weight", d, true);
    projections();
    per_layer("rms_ffn_weight", "norm2.weight", d, true);
    feedforward();
    copy("rms_final_weight", "final_norm.weight", d, true);
    in.skip("freq_cis_real", h.seq_len * head_half);
    in.skip("freq_cis_imag", h.seq_len * head_half);
  } else {
    per_layer("rms_att_weight", "norm1.weight", d, true);
    per_layer("rms_ffn_weight", "norm2.weight", d, true);
    copy("rms_final_weight", "final_norm.weight", d, true);
    copy("token_embedding_table", "embedding", V * d, false);
    projections();
    feedforward();
  }
  if (!h.shared) copy("wcls", "classifier", V * d, false);
  in.finish();
  return out;
}

Model import_llama2c(const std::string& checkpoint, const std::string& tokenizer) {
  const auto checkpoint_bytes =
      FileBytes::open(checkpoint, FileLimits{kMaxWeightsBytes, "a llama2.c checkpoint"});
  Llama2cCheckpoint read = read_llama2c(checkpoint_bytes->text(), checkpoint);
  const auto tokenizer_bytes =
      FileBytes::open(tokenizer, FileLimits{kMostTokenizerBytes, "a tokenizer.bin"});
  SubwordPieces pieces =
      read_tokenizer_bin(tokenizer_bytes->text(), read.config.vocab_size, tokenizer);
  if (read.config.vocab_size < 3 || pieces.pieces[0] != read.config.unk_token) {
    throw model_error(
        tokenizer, "piece 0",
        "must be \"<unk>\", and pieces 1 and 2 <s> and </s>, as llama2.c numbers them");
  }
  // vocab.json is JSON, whose strings are UTF-8 (sentencepiece's pieces are;
  // bytes that are not have pieces <0xNN> of their own).
  for (size_t i = 0; i < pieces.pieces.size(); ++i) {
    if (!is_valid_utf8(pieces.pieces[i])) {
      throw model_error(tokenizer, "piece " + std::to_string(i),
                        "is not valid UTF-8: " + escape_bytes(pieces.pieces[i]));
    }
  }
  Config& c = read.config;
  c.bos_token = pieces.pieces[1];
  Vocabulary vocab(pieces.pieces, tokenizer);
  const std::vector<TensorSpec>& tensors = read.weights.tensors();
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].name == "piece_scores") {
      std::copy(pieces.scores.begin(), pieces.scores.end(), read.weights.mutable_data(i));
    }
  }
  auto subword = std::make_shared<const SubwordTokenizer>(std::move(pieces), tokenizer);
  return Model{ModelPaths{},
               0,
               static_cast<int64_t>(checkpoint_bytes->size()),
               std::move(c),
               std::move(vocab),
               std::move(read.weights),
               SubwordTokenizer::kUnk,
               SubwordTokenizer::kBos,
               std::move(subword),
               nullptr,
               nullptr};
}

}  // namespace nextword
