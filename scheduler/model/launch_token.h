#pragma once
// The launch token's variables, the same on every provider (docs/launch-contract.md): an
// attempt's token, unique per launch, lets orchestrate find the attempt on its site after a
// crash, and the job may read it. It is not an API token: the CLI's ORCH_TOKEN is.
//
// Jobs get it as ORCH_LAUNCH_TOKEN. For one release they also get it as ORCH_TOKEN, the name it
// had before, unless the job's own env or secret_env sets ORCH_TOKEN (an API token it was given
// so that it can call the CLI): the job's value wins. The CLI ignores an ORCH_TOKEN equal to
// ORCH_LAUNCH_TOKEN, with a warning (cli/launch_token_guard.h). Pure: no I/O.

#include <string>
#include <utility>
#include <vector>

#include "scheduler/model/site_types.h"

namespace orch {

inline constexpr const char* kLaunchTokenVar = "ORCH_LAUNCH_TOKEN";
inline constexpr const char* kLegacyLaunchTokenVar = "ORCH_TOKEN";

// ORCH_LAUNCH_TOKEN, then ORCH_TOKEN when the job sets no variable of that name itself.
std::vector<std::pair<std::string, std::string>> launch_token_env(const LaunchRequest& request);

}  // namespace orch
