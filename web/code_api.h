#pragma once
// What the code routes (code_routes.cpp) and a submit with a workdir ask of the server: its
// store of workdir archives (issue 40; the server's is adapters/code's CodeStore, wired in
// server/). An archive is its SHA-256; a user sees only archives they uploaded themselves.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"

namespace orch {

class CodeApi {
 public:
  virtual ~CodeApi() = default;
  // {"sha256", "bytes"} when the archive is here and `user` uploaded it; not_found otherwise
  // (also when another user uploaded it: a hash alone never tells whether a tree exists).
  virtual Result<nlohmann::json> find_code(const std::string& sha256, const std::string& user) = 0;
  // Keeps `archive` as sha256 for `user`: {"sha256", "bytes"}; invalid when its SHA-256 is
  // another or a member breaks the rules (a name with "..", a symlink out of the tree, ...).
  virtual Result<nlohmann::json> put_code(const std::string& sha256, const std::string& archive,
                                          const std::string& user) = 0;
};

// The largest archive PUT /api/v1/code/{sha256} takes (the HTTP server's body limit for it).
inline constexpr std::uint64_t kMaxCodeArchiveBytes = 1ULL << 30;

}  // namespace orch
