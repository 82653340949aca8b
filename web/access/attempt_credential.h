#pragma once
// The credential an attempt's agents push their records home with (issue 44, docs/security.md
// "Agents pushing home"): "orch_att_" + hex(HMAC-SHA256(key, "attempt-push\n" + launch token)),
// the key 32 random bytes the server makes once and keeps owner-only (access.db). Derived, so the
// server stores none; scoped, because the guard takes it only on
// POST /api/v1/attempts/{token}/records for its own token, and only while that attempt is live.

#include <cstddef>
#include <string>
#include <string_view>

namespace orch {

inline constexpr std::string_view kAttemptCredentialPrefix = "orch_att_";
inline constexpr std::size_t kAttemptKeyBytes = 32;

// The credential of the attempt with launch token `token` under `key` (raw bytes).
std::string attempt_credential(std::string_view key, std::string_view token);
// Whether `credential` is token's under key, compared in constant time.
bool attempt_credential_matches(std::string_view key, std::string_view token,
                                std::string_view credential);
// Whether a bearer is meant as an attempt credential (its prefix): such a bearer is never
// looked up as an API token.
bool is_attempt_credential(std::string_view bearer);

}  // namespace orch
