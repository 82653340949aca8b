#pragma once
// $ORCH_TOKEN as the CLI's API token, unless it is the job's launch token. For one release a job
// of orchestrate's finds its attempt's launch token in ORCH_TOKEN as well as in
// ORCH_LAUNCH_TOKEN (scheduler/model/launch_token.h); sent as a bearer token it would only get a
// 401, so the CLI run inside such a job ignores it and says what to do instead. Internal to cli/.

#include <iosfwd>
#include <string>

namespace orch {

// $ORCH_TOKEN, or "" when it is unset or equal to a non-empty $ORCH_LAUNCH_TOKEN. The first
// time this process ignores it, a warning goes to `warn` (never the token itself).
std::string api_token_from_env(std::ostream& warn);

}  // namespace orch
