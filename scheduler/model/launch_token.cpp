// See launch_token.h.
#include "scheduler/model/launch_token.h"

namespace orch {

std::vector<std::pair<std::string, std::string>> launch_token_env(const LaunchRequest& request) {
  std::vector<std::pair<std::string, std::string>> out = {{kLaunchTokenVar, request.token}};
  const std::string legacy = kLegacyLaunchTokenVar;
  const bool job_sets_it = request.env.count(legacy) > 0 || request.secret_env.count(legacy) > 0 ||
                           request.secret_refs.count(legacy) > 0;
  if (!job_sets_it) out.emplace_back(legacy, request.token);
  return out;
}

}  // namespace orch
