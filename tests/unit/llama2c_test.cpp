// model/llama2c.h: llama2.c's three checkpoint versions read into format
// v1's tensors (a hand-made checkpoint whose every value says where it
// came from, so the transposes and the order of the file are checked value
// by value), stories260K's two files giving the same model, and the
// refusals: a file cut at every 4 KB and every header byte, padded, with
// header fields negative, zero or too large, or a value not finite.
#include "model/llama2c.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

#include "base/error.h"
#include "binary_files.h"

using namespace nextword;
using testing::model_error_of;
using testing::put_float;
using testing::put_int;
using testing::read_file;

namespace {

// A checkpoint of dim 4, hidden 2, 1 layer, 2 heads on 1 key/value head
// (head size 2), 3 words, seq_len 4, unshared classifier: llama2.c's tensors
// with value 1000 * t + i for element i of tensor t (t in file order of
// version 1), so that each value names its place.
struct Tiny {
  static constexpr int dim = 4, hidden = 2, heads = 2, kv_heads = 1, vocab = 3, seq = 4;
  static constexpr int kv = 2;  // kv_heads * head size
  // Version 1's order: rms_att, rms_ffn, rms_final, embedding, wq, wk, wv, wo, w1, w2, w3, wcls.
  std::vector<int> sizes = {dim,     dim,      dim,         vocab* dim,  dim* dim,    kv* dim,
                            kv* dim, dim* dim, hidden* dim, dim* hidden, hidden* dim, vocab* dim};
  std::vector<std::vector<float>> tensors;
  Tiny() {
    for (size_t t = 0; t < sizes.size(); ++t) {
      std::vector<float> x(static_cast<size_t>(sizes[t]));
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(1000 * t + i);
      tensors.push_back(x);
    }
  }
  void params(std::string& out, int vocab_field) const {
    for (int v : {dim, hidden, 1, heads, kv_heads, vocab_field, seq}) put_int(out, v);
  }
  void floats(std::string& out, size_t t) const {
    for (float v : tensors[t]) put_float(out, v);
  }
  std::string version0() const {
    std::string out;
    params(out, -vocab);
    for (size_t t : {3, 0, 4, 5, 6, 7, 1, 8, 9, 10, 2}) floats(out, t);
    for (int i = 0; i < 2 * seq * 1; ++i) put_float(out, 0.5f);  // the RoPE tables, seq * hs / 2
    floats(out, 11);
    return out;
  }
  std::string header(int version) const {
    std::string out;
    put_int(out, 0x616b3432);
    put_int(out, version);
    params(out, vocab);
    out += '\0';  // not shared
    if (version == 2) put_int(out, 2);
    out.resize(256, '\0');
    return out;
  }
  std::string version1() const {
    std::string out = header(1);
    for (size_t t = 0; t < tensors.size(); ++t) floats(out, t);
    return out;
  }
  // Groups of 2: q = (1, -2) with scale 0.5 * (t + 1) for every group, so
  // the values are (0.5 (t + 1), -(t + 1)), alternating.
  std::string version2() const {
    std::string out = header(2);
    for (size_t t = 0; t < 3; ++t) floats(out, t);
    for (size_t t = 3; t < tensors.size(); ++t) {
      for (size_t i = 0; i < tensors[t].size(); ++i) out += static_cast<char>(i % 2 == 0 ? 1 : -2);
      for (size_t g = 0; g < tensors[t].size() / 2; ++g) put_float(out, 0.5f * (t + 1));
    }
    return out;
  }
};

const float* tensor(const Weights& w, const std::string& name) {
  for (size_t i = 0; i < w.tensors().size(); ++i) {
    if (w.tensors()[i].name == name) return w.data(i);
  }
  FAIL("no tensor " << name);
  return nullptr;
}

}  // namespace

TEST_CASE("llama2.c checkpoints: every value lands where format v1 wants it", "[llama2c]") {
  const Tiny tiny;
  for (const std::string& bytes : {tiny.version0(), tiny.version1()}) {
    const Llama2cCheckpoint c = read_llama2c(bytes, "tiny.bin");
    const Config& k = c.config;
    CHECK(k.d_model == 4);
    CHECK(k.d_ff == 2);
    CHECK(k.n_heads == 2);
    CHECK(k.kv_heads() == 1);
    CHECK(k.d_k == 2);
    CHECK(k.vocab_size == 3);
    CHECK(k.max_len == 4);
    CHECK_FALSE(k.tied_classifier);
    CHECK(k.subword());
    CHECK(k.gated());
    CHECK(k.norm == Norm::kRmsNorm);
    CHECK(k.positional == Positional::kRope);
    const Weights& w = c.weights;
    CHECK(tensor(w, "layers.0.norm1.weight")[3] == 3);
    CHECK(tensor(w, "layers.0.norm2.weight")[1] == 1001);
    CHECK(tensor(w, "final_norm.weight")[2] == 2002);
    CHECK(tensor(w, "embedding")[5] == 3005);  // as it is: [V, d] in both
    // wq [out 4, in 4] -> w_q [in 4, out 4]: ours (i = 1, o = 2) is theirs (o = 2, i = 1).
    CHECK(tensor(w, "layers.0.attn.w_q")[1 * 4 + 2] == 4000 + 2 * 4 + 1);
    // wk [out 2, in 4] -> w_k [4, 2]: ours (i = 3, o = 1) is theirs 1 * 4 + 3.
    CHECK(tensor(w, "layers.0.attn.w_k")[3 * 2 + 1] == 5000 + 1 * 4 + 3);
    CHECK(tensor(w, "layers.0.attn.w_v")[2 * 2 + 0] == 6000 + 0 * 4 + 2);
    CHECK(tensor(w, "layers.0.attn.w_o")[0 * 4 + 3] == 7000 + 3 * 4 + 0);
    // w1 (the gate) [2, 4] -> w_gate [4, 2]; w2 [4, 2] -> w_out [2, 4]; w3 (up) -> w_in.
    CHECK(tensor(w, "layers.0.ffn.w_gate")[3 * 2 + 1] == 8000 + 1 * 4 + 3);
    CHECK(tensor(w, "layers.0.ffn.w_out")[1 * 4 + 2] == 9000 + 2 * 2 + 1);
    CHECK(tensor(w, "layers.0.ffn.w_in")[2 * 2 + 0] == 10000 + 0 * 4 + 2);
    CHECK(tensor(w, "classifier")[11] == 11011);
  }
  CHECK(read_llama2c(tiny.version0(), "t").version == 0);
  CHECK(read_llama2c(tiny.version1(), "t").version == 1);

  const Llama2cCheckpoint q = read_llama2c(tiny.version2(), "tiny.bin");
  CHECK(q.version == 2);
  CHECK(tensor(q.weights, "final_norm.weight")[2] == 2002);  // norms stay float32
  CHECK(tensor(q.weights, "embedding")[0] == 0.5f * 4);      // q 1 times scale 0.5 (3 + 1)
  CHECK(tensor(q.weights, "embedding")[1] == -2.0f * 2);
  // wq's element (o = 0, i = 1) is q -2 times 0.5 * 5 = -5, at ours (1, 0).
  CHECK(tensor(q.weights, "layers.0.attn.w_q")[1 * 4 + 0] == -5.0f);
  CHECK(tensor(q.weights, "classifier")[4] == 0.5f * 12);
}

TEST_CASE("llama2.c checkpoints: a file that lies about itself is refused", "[llama2c]") {
  const Tiny tiny;
  for (const std::string& good : {tiny.version0(), tiny.version1(), tiny.version2()}) {
    for (size_t cut = 0; cut < good.size(); ++cut) {
      INFO("cut at " << cut << " of " << good.size());
      CHECK_THAT(model_error_of([&] { read_llama2c(good.substr(0, cut), "t.bin"); }),
                 Catch::StartsWith("t.bin: "));
    }
    CHECK(model_error_of([&] { read_llama2c(good + "x", "t.bin"); })
              .ends_with("t.bin: 1 bytes after the last tensor (the header's shapes end at byte " +
                         std::to_string(good.size()) + ")"));
  }
  CHECK(model_error_of([&] { read_llama2c(tiny.version1().substr(0, 300), "t.bin"); }) ==
        "t.bin: has 300 bytes; its header's shapes need " + std::to_string(tiny.version1().size()));
  // Each header field negative, zero and huge, in both header layouts.
  const char* names[] = {"dim",        "hidden_dim", "n_layers", "n_heads",
                         "n_kv_heads", "vocab_size", "seq_len"};
  for (int version : {0, 1}) {
    const std::string good = version == 0 ? tiny.version0() : tiny.version1();
    const size_t first = version == 0 ? 0 : 8;
    for (int field = 0; field < 7; ++field) {
      for (int32_t value : {-7, 0, 1 << 30}) {
        // Version 0's vocab_size is negative for an unshared classifier.
        if (version == 0 && field == 5 && value == -7) continue;
        std::string bad = good;
        std::memcpy(bad.data() + first + 4 * field, &value, 4);
        INFO("version " << version << ", " << names[field] << " = " << value);
        CHECK_THAT(
            model_error_of([&] { read_llama2c(bad, "t.bin"); }),
            Catch::StartsWith(std::string("t.bin: header.") + names[field] + ": must be 1 to"));
      }
    }
  }
  std::string bad = tiny.version1();
  const int32_t three = 3;
  std::memcpy(bad.data() + 8 + 12, &three, 4);  // 3 heads do not divide dim 4
  CHECK(model_error_of([&] { read_llama2c(bad, "t.bin"); }) ==
        "t.bin: header.n_heads: 3 heads do not divide dim 4");
  // The rules between fields are check_config's, named as the header names them.
  bad = tiny.version1();
  const int32_t four = 4;
  std::memcpy(bad.data() + 8 + 12, &four, 4);  // heads of 1 column
  CHECK(model_error_of([&] { read_llama2c(bad, "t.bin"); }) ==
        "t.bin: header.n_heads: a head's width d_k must be even with \"positional\": \"rope\", "
        "got 1");
  std::memcpy(bad.data() + 8 + 16, &three, 4);  // 3 key/value heads of 4
  CHECK(model_error_of([&] { read_llama2c(bad, "t.bin"); }) ==
        "t.bin: header.n_kv_heads: must divide n_heads = 4, got 3");
  bad = tiny.version1();
  const int32_t version = 3;
  std::memcpy(bad.data() + 4, &version, 4);
  CHECK_THAT(model_error_of([&] { read_llama2c(bad, "t.bin"); }),
             Catch::StartsWith("t.bin: header.version: unsupported version 3"));
  bad = tiny.version1();
  const float infinity = INFINITY;
  std::memcpy(bad.data() + 256 + 4 * (12 + 12 + 5), &infinity, 4);  // wq[0] element 5
  CHECK(model_error_of([&] { read_llama2c(bad, "t.bin"); }) ==
        "t.bin: wq[0]: element 5 is not finite");
}

TEST_CASE("stories260K: both llama2.c files give one model, cut anywhere they are refused",
          "[llama2c][shared]") {
  const std::string dir = std::string(NEXTWORD_SHARED_MODELS_DIR) + "/stories260K/";
  const std::string v0 = read_file(dir + "stories260K.bin"),
                    v1 = read_file(dir + "stories260K_v1.bin");
  REQUIRE(v0.size() == 28 + 4 * 264128u);
  REQUIRE(v1.size() == 256 + 4 * 260032u);
  const Llama2cCheckpoint a = read_llama2c(v0, "v0"), b = read_llama2c(v1, "v1");
  const Config& c = a.config;
  CHECK(c.d_model == 64);
  CHECK(c.d_ff == 172);
  CHECK(c.n_layers == 5);
  CHECK(c.n_heads == 8);
  CHECK(c.kv_heads() == 4);
  CHECK(c.vocab_size == 512);
  CHECK(c.max_len == 512);
  CHECK(c.tied_classifier);
  REQUIRE(a.weights.tensors().size() == b.weights.tensors().size());
  for (size_t i = 0; i < a.weights.tensors().size(); ++i) {
    const size_t n = static_cast<size_t>(a.weights.tensors()[i].size());
    INFO(a.weights.tensors()[i].name);
    CHECK(std::memcmp(a.weights.data(i), b.weights.data(i), n * 4) == 0);
  }
  for (const std::string* file : {&v0, &v1}) {
    for (size_t cut = 0; cut < file->size(); cut += 4096) {
      INFO("cut at " << cut);
      CHECK_THAT(model_error_of([&] { read_llama2c(file->substr(0, cut), "s.bin"); }),
                 Catch::StartsWith("s.bin: "));
    }
  }
}
