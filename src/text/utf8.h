// UTF-8 validity, as RFC 3629 defines it (no overlong forms, no surrogates,
// nothing above U+10FFFF). JSON strings and vocabulary words must be UTF-8.
#pragma once

#include <cstddef>
#include <string_view>

namespace nextword {

// Bytes in the valid UTF-8 sequence starting at p (1 to 4), or 0 when the
// bytes from p to end do not start one.
size_t utf8_sequence_length(const char* p, const char* end);

bool is_valid_utf8(std::string_view s);

}  // namespace nextword
