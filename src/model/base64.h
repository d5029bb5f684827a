// Standard base64 (RFC 4648, '=' padding), as used by "b64" tensors.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nextword {

// nullopt when `text` is not valid base64 (bad character, bad length or padding).
std::optional<std::string> base64_decode(std::string_view text);
std::string base64_encode(std::string_view bytes);

}  // namespace nextword
