#include "text/utf8.h"

#include <cstdint>
#include <cstdio>

namespace nextword {

size_t utf8_sequence_length(const char* p, const char* end) {
  if (p >= end) return 0;
  const auto c = static_cast<uint8_t>(*p);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint8_t low = 0x80, high = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) low = 0xA0;   // overlong
    if (c == 0xED) high = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) low = 0x90;   // overlong
    if (c == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (end - p < static_cast<std::ptrdiff_t>(n)) return 0;
  const auto second = static_cast<uint8_t>(p[1]);
  if (second < low || second > high) return 0;
  for (size_t k = 2; k < n; ++k) {
    if ((static_cast<uint8_t>(p[k]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

bool is_valid_utf8(std::string_view s) {
  const char* p = s.data();
  const char* end = p + s.size();
  while (p < end) {
    const size_t n = utf8_sequence_length(p, end);
    if (n == 0) return false;
    p += n;
  }
  return true;
}

std::string escape_bytes(std::string_view s) {
  std::string out;
  const char* end = s.data() + s.size();
  for (const char* p = s.data(); p < end;) {
    const size_t n = utf8_sequence_length(p, end);
    if (n == 0 || is_control(*p)) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(*p));
      out += escaped;
      ++p;
    } else {
      out.append(p, n);
      p += n;
    }
  }
  return out;
}

}  // namespace nextword
