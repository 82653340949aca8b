#include "web/access/attempt_credential.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "scheduler/common/text.h"

namespace orch {

std::string attempt_credential(std::string_view key, std::string_view token) {
  const std::string text = "attempt-push\n" + std::string(token);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac, &length);
  return std::string(kAttemptCredentialPrefix) + to_hex(mac, length);
}

bool attempt_credential_matches(std::string_view key, std::string_view token,
                                std::string_view credential) {
  const std::string expected = attempt_credential(key, token);
  // The length is public (the prefix and 64 hex digits); the digits are compared in full.
  return credential.size() == expected.size() &&
         CRYPTO_memcmp(expected.data(), credential.data(), expected.size()) == 0;
}

bool is_attempt_credential(std::string_view bearer) {
  return bearer.substr(0, kAttemptCredentialPrefix.size()) == kAttemptCredentialPrefix;
}

}  // namespace orch
