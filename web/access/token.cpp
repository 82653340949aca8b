#include "web/access/token.h"

#include <openssl/sha.h>
#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "scheduler/common/text.h"

namespace orch {
Result<std::string> random_bytes(std::size_t count) {
  std::string bytes(count, '\0');
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = getrandom(bytes.data() + got, bytes.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return make_error(ErrorKind::io, std::string("cannot read the kernel's random source: ") +
                                           std::strerror(errno));
    }
    got += static_cast<std::size_t>(n);
  }
  return bytes;
}

Result<std::string> new_token() {
  auto bytes = random_bytes(32);
  if (!bytes) return bytes.error();
  return std::string(kTokenPrefix) +
         to_hex(reinterpret_cast<const unsigned char*>(bytes->data()), bytes->size());
}

std::string token_hash(std::string_view token) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), digest.data());
  return to_hex(digest.data(), digest.size());
}

bool looks_like_token(std::string_view text) {
  if (text.size() != kTokenPrefix.size() + 64 ||
      text.substr(0, kTokenPrefix.size()) != kTokenPrefix)
    return false;
  for (char c : text.substr(kTokenPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace orch
