// UTF-8 validity, as RFC 3629 defines it (no overlong forms, no surrogates,
// nothing above U+10FFFF). JSON strings and vocabulary words must be UTF-8.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nextword {

// Bytes in the valid UTF-8 sequence starting at p (1 to 4), or 0 when the
// bytes from p to end do not start one.
size_t utf8_sequence_length(const char* p, const char* end);

bool is_valid_utf8(std::string_view s);

// A C0 control character or DEL (tab and line ends included).
inline bool is_control(char c) {
  const auto b = static_cast<unsigned char>(c);
  return b < 0x20 || b == 0x7F;
}

// `s` as one line of text for a message: control characters and bytes that
// are not UTF-8 written as \xNN, the rest as it is.
std::string escape_bytes(std::string_view s);

}  // namespace nextword
