#include "format/base64.h"

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

std::optional<size_t> base64_decoded_size(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  return text.size() / 4 * 3 - padding;
}

bool base64_decode_into(std::string_view text, char* out) {
  const std::optional<size_t> size = base64_decoded_size(text);
  if (!size) return false;
  const auto* in = reinterpret_cast<const uint8_t*>(text.data());
  const size_t groups = text.size() / 4, full = *size / 3;
  // Whole groups first, with one check at the end: every invalid character
  // decodes to kInvalid, whose top bit no valid 6-bit value has.
  uint32_t seen = 0;
  for (size_t g = 0; g < full; ++g, in += 4, out += 3) {
    const uint32_t a = kDecode[in[0]], b = kDecode[in[1]], c = kDecode[in[2]], d = kDecode[in[3]];
    seen |= a | b | c | d;
    const uint32_t group = a << 18 | b << 12 | c << 6 | d;
    out[0] = static_cast<char>(group >> 16);
    out[1] = static_cast<char>(group >> 8 & 0xff);
    out[2] = static_cast<char>(group & 0xff);
  }
  if ((seen & 0x80) != 0) return false;
  if (full == groups) return true;
  // The padded last group: 1 or 2 bytes, then '='.
  const size_t bytes = *size - full * 3;
  uint32_t group = 0;
  for (size_t j = 0; j < 4; ++j) {
    const uint8_t value = j <= bytes ? kDecode[in[j]] : (in[j] == '=' ? 0 : kInvalid);
    if (value == kInvalid) return false;
    group = group << 6 | value;
  }
  out[0] = static_cast<char>(group >> 16);
  if (bytes == 2) out[1] = static_cast<char>(group >> 8 & 0xff);
  return true;
}

std::optional<std::string> base64_decode(std::string_view text) {
  const std::optional<size_t> size = base64_decoded_size(text);
  if (!size) return std::nullopt;
  std::string out(*size, '\0');
  if (!base64_decode_into(text, out.data())) return std::nullopt;
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
