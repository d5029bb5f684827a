// ggml's blocks widened (base/quant_blocks.h): the worked blocks of
// docs/blocks.md, each value worked by hand from the layout (the same blocks
// tests/reference/ggml_blocks_test.py reads), and the scales that are not
// finite found.
#include "base/quant_blocks.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

using namespace nextword;

namespace {

template <class Block>
std::vector<float> values_of(WeightType type, const Block& block) {
  std::vector<float> out(static_cast<size_t>(block_shape(type).values));
  REQUIRE(widen_blocks(type, reinterpret_cast<const char*>(&block), 1, out.data()) == 1);
  return out;
}

}  // namespace

TEST_CASE("the worked blocks of docs/blocks.md widen to their values", "[math]") {
  SECTION("Q5_0: the fifth bits of a little-endian word") {
    BlockQ5_0 b{};
    b.d = float_to_f16(2.0f);
    b.qh[0] = 1;
    b.qh[2] = 1;  // bits 0 and 16
    b.qs[0] = 0x30;
    const std::vector<float> v = values_of(WeightType::kQ5_0, b);
    CHECK(v[0] == 0.0f);
    CHECK(v[16] == 6.0f);
    CHECK(v[1] == -32.0f);
    CHECK(v[31] == -32.0f);
  }
  SECTION("Q4_0 and Q4_1: byte j holds values j and j + 16") {
    BlockQ4_0 b{};
    b.d = float_to_f16(0.5f);
    std::memset(b.qs, 0x88, sizeof b.qs);
    b.qs[0] = 0x9F;
    std::vector<float> v = values_of(WeightType::kQ4_0, b);
    CHECK((v[0] == 3.5f && v[16] == 0.5f && v[1] == 0.0f && v[17] == 0.0f));
    BlockQ4_1 c{};
    c.d = float_to_f16(0.5f);
    c.m = float_to_f16(-1.0f);
    std::memcpy(c.qs, b.qs, sizeof c.qs);
    v = values_of(WeightType::kQ4_1, c);
    CHECK((v[0] == 6.5f && v[16] == 3.5f && v[1] == 3.0f));
  }
  SECTION("Q5_1 and Q8_0") {
    BlockQ5_1 b{};
    b.d = float_to_f16(0.25f);
    b.m = float_to_f16(1.0f);
    b.qh[3] = 0x80;  // bit 31: value 31's fifth
    b.qs[0] = 0xF1;
    std::vector<float> v = values_of(WeightType::kQ5_1, b);
    CHECK((v[0] == 1.25f && v[16] == 4.75f && v[31] == 5.0f));
    BlockQ8_0 q{};
    q.d = float_to_f16(0.125f);
    for (int i = 0; i < 32; ++i) q.q[i] = static_cast<int8_t>(i - 16);
    v = values_of(WeightType::kQ8_0, q);
    CHECK((v[0] == -2.0f && v[31] == 1.875f));
  }
  SECTION("Q4_K: 6-bit scales and minimums, runs of two sub-blocks") {
    BlockQ4_K b{};
    b.d = float_to_f16(1.0f);
    b.dmin = float_to_f16(0.5f);
    b.scales[0] = 0x42;
    b.scales[4] = 0x83;
    b.scales[8] = 0x51;
    b.qs[0] = 0x7A;
    b.qs[64] = 0x0C;
    const std::vector<float> v = values_of(WeightType::kQ4_K, b);
    CHECK((v[0] == 18.5f && v[128] == 185.5f && v[32] == 0.0f && v[1] == -1.5f));
    const KScales k = k_scales(b.scales);
    CHECK((k.scale[4] == 17 && k.min[4] == 37));
  }
  SECTION("Q5_K: the fifth bit of sub-block s is bit s of qh[l]") {
    BlockQ5_K b{};
    b.d = float_to_f16(1.0f);
    b.dmin = 0;
    for (int s = 0; s < 4; ++s) b.scales[s] = 1;
    b.qh[0] = 0b0000'0110;
    b.qs[0] = 0x21;
    const std::vector<float> v = values_of(WeightType::kQ5_K, b);
    CHECK((v[0] == 1.0f && v[32] == 18.0f && v[64] == 16.0f && v[96] == 0.0f));
  }
  SECTION("Q6_K: halves of 128, four nibble-and-two-bit runs, a scale each 16 values") {
    std::vector<unsigned char> raw(sizeof(BlockQ6_K));
    raw[0] = 0x05;
    raw[128] = 0x32;
    raw[192] = 0xFD;
    raw[196] = 2;
    const uint16_t d = float_to_f16(0.25f);
    std::memcpy(&raw[208], &d, sizeof d);
    BlockQ6_K b;
    std::memcpy(&b, raw.data(), sizeof b);
    const std::vector<float> v = values_of(WeightType::kQ6_K, b);
    CHECK((v[0] == -3.75f && v[64] == 8.0f && v[1] == 24.0f));
  }
}

TEST_CASE("a block whose scale or minimum is not finite is found", "[math]") {
  std::vector<BlockQ4_K> blocks(5);
  for (BlockQ4_K& b : blocks) {
    b.d = float_to_f16(1.0f);
    b.dmin = float_to_f16(0.5f);
  }
  const auto* bytes = reinterpret_cast<const char*>(blocks.data());
  std::vector<float> out(5 * kSuperBlock);
  CHECK(first_non_finite_block(WeightType::kQ4_K, bytes, 5) == 5);
  CHECK(widen_blocks(WeightType::kQ4_K, bytes, 5, out.data()) == 5);
  blocks[3].dmin = 0x7e00;  // NaN
  blocks[4].d = 0x7c00;     // infinity
  CHECK(first_non_finite_block(WeightType::kQ4_K, bytes, 5) == 3);
  CHECK(widen_blocks(WeightType::kQ4_K, bytes, 5, out.data()) == 3);
  BlockQ4_1 b{};
  b.m = 0xfc00;  // minus infinity
  CHECK(first_non_finite_block(WeightType::kQ4_1, reinterpret_cast<const char*>(&b), 1) == 0);
  CHECK(block_shape(WeightType::kQ6_K).bytes == 210);
  CHECK(block_shape(WeightType::kQ5_1).values == 32);
}
