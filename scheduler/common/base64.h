#pragma once
// Standard base64 (RFC 4648, alphabet A-Z a-z 0-9 + /, '=' padding): kubeconfig "-data"
// fields, the cluster information handed to exec credential plugins, test certificates.

#include <optional>
#include <string>
#include <string_view>

namespace orch {

std::string encode_base64(std::string_view bytes);

// Whitespace is ignored and padding is optional; nullopt for anything that is not base64
// (a character outside the alphabet, data after '=', a dangling sextet).
std::optional<std::string> decode_base64(std::string_view text);

}  // namespace orch
