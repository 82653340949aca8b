#pragma once
// SHA-256 (FIPS 180-4) of a byte string, as lowercase hex. Pure and small: for keys the
// scheduler derives from text (a setup's cache key, issue 40), never for large files.

#include <string>
#include <string_view>

namespace orch {

std::string sha256_hex(std::string_view data);

}  // namespace orch
