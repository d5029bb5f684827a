#include "model/base64.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace nextword {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr uint8_t kInvalid = 0xff;

constexpr std::array<uint8_t, 256> make_decode_table() {
  std::array<uint8_t, 256> table{};
  for (auto& entry : table) entry = kInvalid;
  for (uint8_t i = 0; i < 64; ++i) table[static_cast<uint8_t>(kAlphabet[i])] = i;
  return table;
}
constexpr std::array<uint8_t, 256> kDecode = make_decode_table();

}  // namespace

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    uint32_t group = 0;
    for (size_t j = 0; j < 4; ++j) {
      const auto c = static_cast<uint8_t>(text[i + j]);
      uint8_t value = kDecode[c];
      if (c == '=' && last && j >= 4 - padding) value = 0;
      if (value == kInvalid) return std::nullopt;
      group = group << 6 | value;
    }
    out.push_back(static_cast<char>(group >> 16));
    if (!last || padding < 2) out.push_back(static_cast<char>(group >> 8 & 0xff));
    if (!last || padding < 1) out.push_back(static_cast<char>(group & 0xff));
  }
  return out;
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t group = 0;
    for (size_t j = 0; j < 3; ++j) {
      group = group << 8 | (j < n ? static_cast<uint8_t>(bytes[i + j]) : 0u);
    }
    for (size_t j = 0; j < 4; ++j) {
      out.push_back(j <= n ? kAlphabet[group >> (18 - 6 * j) & 0x3f] : '=');
    }
  }
  return out;
}

}  // namespace nextword
