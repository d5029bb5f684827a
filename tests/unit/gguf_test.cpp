// The GGUF container (format/gguf.h): files laid out here from the format's
// description (each field appended by hand), read back; every way a file
// can be bad is one error naming the file and the field; a file cut at any
// byte is refused; and the real files of ../shared/models/gguf.
#include "format/gguf.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "binary_files.h"
#include "format/binary_fields.h"
#include "format/file_bytes.h"

using namespace nextword;

namespace {

// A GGUF file built field by field.
struct GgufBuilder {
  uint32_t version = 3;
  std::string keys;
  uint64_t key_count = 0;
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;
    uint32_t type;
    std::string data;
    int64_t offset = -1;  // -1: the next aligned place
  };
  std::vector<Tensor> tensors;
  size_t alignment = 32;

  static void put_string(std::string& out, std::string_view s) {
    append_field<uint64_t>(out, s.size());
    out += s;
  }
  void key(std::string_view name, GgufValueType type, const std::string& value) {
    put_string(keys, name);
    append_field<uint32_t>(keys, static_cast<uint32_t>(type));
    keys += value;
    ++key_count;
  }
  template <class T>
  void scalar(std::string_view name, GgufValueType type, T value) {
    std::string v;
    append_field<T>(v, value);
    key(name, type, v);
  }
  void string(std::string_view name, std::string_view value) {
    std::string v;
    put_string(v, value);
    key(name, GgufValueType::kString, v);
  }
  void strings(std::string_view name, const std::vector<std::string>& values) {
    std::string v;
    append_field<uint32_t>(v, static_cast<uint32_t>(GgufValueType::kString));
    append_field<uint64_t>(v, values.size());
    for (const std::string& s : values) put_string(v, s);
    key(name, GgufValueType::kArray, v);
  }
  void floats(std::string_view name, const std::vector<float>& values) {
    std::string v;
    append_field<uint32_t>(v, static_cast<uint32_t>(GgufValueType::kFloat32));
    append_field<uint64_t>(v, values.size());
    for (const float x : values) append_field<float>(v, x);
    key(name, GgufValueType::kArray, v);
  }
  void tensor(std::string name, std::vector<uint64_t> dims, uint32_t type, std::string data) {
    tensors.push_back({std::move(name), std::move(dims), type, std::move(data)});
  }
  std::string bytes() const {
    std::string out = "GGUF";
    append_field<uint32_t>(out, version);
    append_field<uint64_t>(out, tensors.size());
    append_field<uint64_t>(out, key_count);
    out += keys;
    std::vector<uint64_t> offsets;
    uint64_t next = 0;
    for (const Tensor& t : tensors) {
      const uint64_t at = t.offset >= 0 ? static_cast<uint64_t>(t.offset) : next;
      offsets.push_back(at);
      next = (at + t.data.size() + alignment - 1) / alignment * alignment;
      put_string(out, t.name);
      append_field<uint32_t>(out, static_cast<uint32_t>(t.dims.size()));
      for (const uint64_t d : t.dims) append_field<uint64_t>(out, d);
      append_field<uint32_t>(out, t.type);
      append_field<uint64_t>(out, at);
    }
    out.resize((out.size() + alignment - 1) / alignment * alignment, '\0');
    const size_t data_start = out.size();
    for (size_t i = 0; i < tensors.size(); ++i) {
      const size_t end = data_start + offsets[i] + tensors[i].data.size();
      if (out.size() < end) out.resize(end, '\0');
      std::memcpy(out.data() + data_start + offsets[i], tensors[i].data.data(),
                  tensors[i].data.size());
    }
    return out;
  }
};

std::string floats_bytes(const std::vector<float>& x) {
  std::string out;
  for (const float v : x) append_field<float>(out, v);
  return out;
}

GgufBuilder small_model() {
  GgufBuilder b;
  b.string("general.architecture", "llama");
  b.scalar<uint32_t>("llama.context_length", GgufValueType::kUint32, 2048);
  b.scalar<float>("llama.attention.layer_norm_rms_epsilon", GgufValueType::kFloat32, 1e-5f);
  b.scalar<uint8_t>("tokenizer.ggml.add_bos_token", GgufValueType::kBool, 1);
  b.scalar<int64_t>("general.file_type", GgufValueType::kInt64, 0);
  b.scalar<double>("llama.rope.freq_base", GgufValueType::kFloat64, 500000.0);
  b.strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "\xe2\x96\x81the"});
  b.floats("tokenizer.ggml.scores", {0, 0, 0, -1.5f});
  b.tensor("token_embd.weight", {8, 4}, 0, floats_bytes(std::vector<float>(32, 0.25f)));
  b.tensor("output_norm.weight", {8}, 0, floats_bytes({1, 2, 3, 4, 5, 6, 7, 8}));
  std::string q8(34 * 2, '\0');  // two Q8_0 blocks: a row of 64
  b.tensor("blk.0.attn_q.weight", {64, 1}, 8, q8);
  return b;
}

std::shared_ptr<const GgufFile> opened(std::string bytes) {
  return GgufFile::from_file(FileBytes::from_bytes("m.gguf", std::move(bytes)));
}

std::string error_of(std::string bytes) {
  try {
    opened(std::move(bytes));
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kModel);
    return e.message();
  }
  return "no error";
}

}  // namespace

TEST_CASE("GGUF: a file laid out by hand reads back, keys and tensors", "[gguf]") {
  const auto g = opened(small_model().bytes());
  CHECK(g->version() == 3);
  CHECK(g->alignment() == 32);
  CHECK(g->metadata().size() == 8);
  CHECK(g->string("general.architecture") == "llama");
  CHECK(g->integer("llama.context_length") == 2048);
  CHECK(g->number("llama.attention.layer_norm_rms_epsilon") == Approx(1e-5));
  CHECK(g->number("llama.rope.freq_base") == 500000.0);
  CHECK(g->boolean("tokenizer.ggml.add_bos_token", false));
  CHECK(g->integer("general.file_type") == 0);
  CHECK(g->integer("llama.block_count", 7) == 7);
  CHECK(g->strings("tokenizer.ggml.tokens") ==
        std::vector<std::string_view>{"<unk>", "<s>", "</s>", "\xe2\x96\x81the"});
  CHECK(g->numbers("tokenizer.ggml.scores") == std::vector<double>{0, 0, 0, -1.5});
  CHECK(g->value_text(*g->find("tokenizer.ggml.tokens")) == "[4 string]");
  CHECK(g->value_text(*g->find("llama.context_length")) == "2048");
  REQUIRE(g->tensors().size() == 3);
  const GgufTensor* e = g->tensor("token_embd.weight");
  REQUIRE(e != nullptr);
  CHECK(e->row_length() == 8);
  CHECK(e->rows() == 4);
  CHECK(e->bytes == 128);
  CHECK((reinterpret_cast<uintptr_t>(e->data) - reinterpret_cast<uintptr_t>(g->bytes()->data())) %
            32 ==
        0);
  CHECK(read_field<float>(g->tensor("output_norm.weight")->data + 4 * 7) == 8.0f);
  CHECK(g->tensor("blk.0.attn_q.weight")->bytes == 68);
  CHECK(g->tensor("blk.0.attn_q.weight")->type == static_cast<uint32_t>(GgmlType::kQ8_0));
  CHECK(g->tensor("missing") == nullptr);
  CHECK(GgufFile::is_gguf("GGUF\x03"));
  CHECK_FALSE(GgufFile::is_gguf("{\"config\""));
}

TEST_CASE("GGUF: wrong types and missing keys name the key", "[gguf]") {
  const auto g = opened(small_model().bytes());
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.message();
    }
    return std::string("no error");
  };
  CHECK(message([&] { g->integer("llama.block_count"); }) ==
        "m.gguf: metadata.llama.block_count: missing");
  CHECK(message([&] { g->integer("general.architecture"); }) ==
        "m.gguf: metadata.general.architecture: is string, not a count");
  CHECK(message([&] { g->string("llama.context_length"); }) ==
        "m.gguf: metadata.llama.context_length: is uint32, not a string");
  CHECK(message([&] { g->strings("tokenizer.ggml.scores"); }) ==
        "m.gguf: metadata.tokenizer.ggml.scores: is an array of float32, not an array of strings");
  CHECK(message([&] { g->strings("tokenizer.ggml.tokens", 5); }) ==
        "m.gguf: metadata.tokenizer.ggml.tokens: 4 strings, not 5");
  CHECK(message([&] { g->integer("llama.attention.layer_norm_rms_epsilon"); }) ==
        "m.gguf: metadata.llama.attention.layer_norm_rms_epsilon: is float32, not a count");
}

TEST_CASE("GGUF: every bad file is one error naming the field", "[gguf]") {
  const std::string good = small_model().bytes();
  CHECK(error_of(good) == "no error");
  std::string bad = good;
  bad[0] = 'X';
  CHECK(error_of(bad) == "m.gguf: magic: not a GGUF file (its first 4 bytes are not GGUF)");
  bad = good;
  bad[4] = 1;
  CHECK(error_of(bad).find("m.gguf: version: 1, GGUF's first version") == 0);
  bad = good;
  bad[4] = 4;
  CHECK(error_of(bad) == "m.gguf: version: 4 is not 2 or 3");
  bad = good;
  bad[4] = 0;
  bad[7] = 3;
  CHECK(error_of(bad) ==
        "m.gguf: version: a big-endian GGUF file (nextword reads little-endian ones)");
  {
    GgufBuilder b = small_model();
    b.version = 2;
    CHECK(error_of(b.bytes()) == "no error");
  }
  {  // a key count the file cannot hold
    bad = good;
    const uint64_t many = uint64_t{1} << 60;
    std::memcpy(bad.data() + 16, &many, 8);
    CHECK(error_of(bad).find("m.gguf: metadata_kv_count: 1152921504606846976 keys cannot fit") ==
          0);
  }
  {  // an unknown value type, a string past the end, an array past the end
    GgufBuilder b;
    b.scalar<uint32_t>("x.weird", static_cast<GgufValueType>(13), 1);
    CHECK(error_of(b.bytes()) == "m.gguf: metadata.x.weird: unknown value type 13");
    GgufBuilder s;
    std::string v;
    append_field<uint64_t>(v, 1000);
    s.key("x.name", GgufValueType::kString, v + "abc");
    CHECK(error_of(s.bytes()).find("m.gguf: metadata.x.name: a string of 1000 bytes at byte ") ==
          0);
    GgufBuilder a;
    v.clear();
    append_field<uint32_t>(v, static_cast<uint32_t>(GgufValueType::kUint32));
    append_field<uint64_t>(v, uint64_t{1} << 40);
    a.key("x.list", GgufValueType::kArray, v);
    CHECK(error_of(a.bytes()).find(
              "m.gguf: metadata.x.list: 1099511627776 values of uint32 run past") == 0);
    GgufBuilder n;
    v.clear();
    append_field<uint32_t>(v, static_cast<uint32_t>(GgufValueType::kArray));
    append_field<uint64_t>(v, 0);
    n.key("x.nested", GgufValueType::kArray, v);
    CHECK(error_of(n.bytes()) == "m.gguf: metadata.x.nested: an array of arrays (not read)");
    GgufBuilder twice;
    twice.string("a", "1");
    twice.string("a", "2");
    CHECK(error_of(twice.bytes()) == "m.gguf: metadata.a: the key is there twice");
  }
  {  // alignment
    GgufBuilder b = small_model();
    b.scalar<uint32_t>("general.alignment", GgufValueType::kUint32, 24);
    CHECK(error_of(b.bytes()) ==
          "m.gguf: metadata.general.alignment: must be a power of 2 up to 65536, got 24");
    GgufBuilder c = small_model();
    c.scalar<uint32_t>("general.alignment", GgufValueType::kUint32, 64);
    c.alignment = 64;
    const auto g = opened(c.bytes());
    CHECK(g->alignment() == 64);
    CHECK(g->tensor("output_norm.weight")->offset == 128);
  }
  {  // tensors: type, blocks, dimensions, offsets, overlap, outside the file
    GgufBuilder b;
    b.tensor("t", {8}, 99, std::string(32, '\0'));
    CHECK(error_of(b.bytes()) == "m.gguf: tensors.t: type 99 is no ggml type");
    GgufBuilder blocks;
    blocks.tensor("q", {48}, 8, std::string(51, '\0'));
    CHECK(error_of(blocks.bytes()) ==
          "m.gguf: tensors.q: rows of 48 elements are not whole Q8_0 blocks of 32");
    GgufBuilder dims;
    dims.tensor("d", {2, 2, 2, 2, 2}, 0, std::string(128, '\0'));
    CHECK(error_of(dims.bytes()) == "m.gguf: tensors.d: 5 dimensions (GGUF tensors have 1 to 4)");
    GgufBuilder zero;
    zero.tensor("z", {4, 0}, 0, "");
    CHECK(error_of(zero.bytes()) == "m.gguf: tensors.z: dimension 1 of 0 is out of range");
    GgufBuilder misaligned;
    misaligned.tensor("a", {4}, 0, std::string(16, '\0'));
    misaligned.tensors[0].offset = 8;
    CHECK(error_of(misaligned.bytes()) ==
          "m.gguf: tensors.a: offset 8 is not a multiple of the 32-byte alignment");
    GgufBuilder overlap;
    overlap.tensor("a", {16}, 0, std::string(64, '\0'));
    overlap.tensor("b", {16}, 0, std::string(64, '\0'));
    overlap.tensors[1].offset = 32;
    CHECK(error_of(overlap.bytes()) == "m.gguf: tensors.b: its bytes overlap those of a");
    GgufBuilder twice;
    twice.tensor("a", {4}, 0, std::string(16, '\0'));
    twice.tensor("a", {4}, 0, std::string(16, '\0'));
    CHECK(error_of(twice.bytes()) == "m.gguf: tensors.a: the name is there twice");
    const std::string whole = small_model().bytes();
    CHECK(
        error_of(whole.substr(0, whole.size() - 1))
            .find("m.gguf: tensors.blk.0.attn_q.weight: its 68 bytes at offset 160 lie outside") ==
        0);
  }
}

TEST_CASE("GGUF: a file cut at any byte is refused with one line", "[gguf]") {
  const std::string good = small_model().bytes();
  for (size_t n = 0; n < good.size(); ++n) {
    INFO("cut at " << n);
    const std::string message = error_of(good.substr(0, n));
    CHECK(message.rfind("m.gguf: ", 0) == 0);
    CHECK(message.find('\n') == std::string::npos);
  }
}

TEST_CASE("GGUF: the shared stories260K files", "[gguf][shared]") {
  const std::string dir = std::string(NEXTWORD_SHARED_MODELS_DIR) + "/gguf/";
  const auto g = GgufFile::open(dir + "stories260K.gguf");
  CHECK(g->version() == 3);
  CHECK(g->metadata().size() == 19);
  CHECK(g->tensors().size() == 48);
  CHECK(g->string("general.architecture") == "llama");
  CHECK(g->string("tokenizer.ggml.model") == "llama");
  CHECK(g->strings("tokenizer.ggml.tokens").size() == 512);
  CHECK(g->integer("llama.context_length") == 2048);
  for (const GgufTensor& t : g->tensors()) CHECK(t.type == 0);
  // The embedding and the output are the same floats (SOURCES.md).
  const GgufTensor* e = g->tensor("token_embd.weight");
  const GgufTensor* o = g->tensor("output.weight");
  REQUIRE(e != nullptr);
  REQUIRE(o != nullptr);
  CHECK(e->bytes == o->bytes);
  CHECK(std::memcmp(e->data, o->data, e->bytes) == 0);
  try {
    GgufFile::open(dir + "stories260K-gguf-v1.gguf");
    FAIL("a version 1 file was read");
  } catch (const Error& err) {
    CHECK(err.code() == ExitCode::kModel);
    CHECK(err.message() == dir +
                               "stories260K-gguf-v1.gguf: version: 1, GGUF's first version, which "
                               "nextword does not read (it reads versions 2 and 3; llama.cpp's "
                               "convert scripts write version 3)");
  }
  // Every 4 KiB boundary of the real file: one line each.
  const std::string bytes = testing::read_file(dir + "stories260K.gguf");
  for (size_t n = 0; n < bytes.size(); n += 4096) {
    INFO("cut at " << n);
    CHECK(error_of(bytes.substr(0, n)).rfind("m.gguf: ", 0) == 0);
  }
}
