#pragma once
// API tokens as secrets: made from the kernel's random source, shown once, kept only as their
// SHA-256 (a token has 256 bits of entropy, so a fast hash is as safe as a slow one here).

#include <cstddef>
#include <string>
#include <string_view>

#include "scheduler/common/result.h"

namespace orch {

inline constexpr std::string_view kTokenPrefix = "orch_";

// "orch_" and 64 lowercase hex digits (32 random bytes). io when the random source fails.
Result<std::string> new_token();
// n bytes from the kernel's random source (what new_token and the attempt key are made of).
Result<std::string> random_bytes(std::size_t n);
// The lowercase hex SHA-256 of token: what the server stores and compares.
std::string token_hash(std::string_view token);
// Whether text has the shape new_token() makes (checked before any lookup).
bool looks_like_token(std::string_view text);

}  // namespace orch
