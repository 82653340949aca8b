#pragma once
// The server's own admin token (docs/security.md "The first admin"). A start whose
// <state>/admin.token holds no live admin token, while no person-made admin token is live, makes
// one and leaves it there (mode 0600). The file is written (fsynced, renamed, its directory
// fsynced) before the token's row goes live, so a kill at any moment leaves either nothing new
// or a file whose token works; and a state that an older version left with a live admin nobody
// holds is repaired by the next start. Internal to cli/.

#include <string>

#include "scheduler/common/result.h"
#include "web/access/access_store.h"

namespace orch {

inline constexpr const char* kServerMadeBy = "orchestrate serve";

Result<void> ensure_admin_token(AccessStore& access, const std::string& path);

}  // namespace orch
