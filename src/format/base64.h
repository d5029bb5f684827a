// Standard base64 (RFC 4648, '=' padding), as used by "b64" tensors.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nextword {

// nullopt when `text` is not valid base64 (bad character, bad length or padding).
std::optional<std::string> base64_decode(std::string_view text);
// Bytes that `text` decodes to, or nullopt when its length or padding is wrong.
std::optional<size_t> base64_decoded_size(std::string_view text);
// Decodes `text` into out[0 .. base64_decoded_size(text)); false when it is
// not valid base64.
bool base64_decode_into(std::string_view text, char* out);
std::string base64_encode(std::string_view bytes);

}  // namespace nextword
