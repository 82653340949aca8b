// See launch_token_guard.h.
#include "cli/launch_token_guard.h"

#include <atomic>
#include <cstdlib>
#include <ostream>

namespace orch {

std::string api_token_from_env(std::ostream& warn) {
  const char* token = std::getenv("ORCH_TOKEN");
  const char* launch = std::getenv("ORCH_LAUNCH_TOKEN");
  if (token == nullptr) return "";
  if (launch == nullptr || *launch == '\0' || std::string(token) != launch) return token;
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true)) {
    warn << "orchestrate: warning: ORCH_TOKEN holds this job's launch token "
            "(ORCH_LAUNCH_TOKEN), not an API token, so it is not sent. To call orchestrate from "
            "a job, give the job an API token as ORCH_TOKEN in its spec (secret_env: "
            "{ORCH_TOKEN: {secret: NAME}}, a token an admin registered with `orchestrate secret "
            "set`).\n";
  }
  return "";
}

}  // namespace orch
