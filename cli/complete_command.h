#pragma once
// `orchestrate __complete KIND` (hidden; issue 42): the words the completion scripts
// (cli/completion.h) offer for a value the server knows, one per line. Asked of the server with
// a short timeout and cached a few seconds in the user's cache directory (cli/user_config.h:
// `complete-KIND.json`, mode 0600 in a 0700 directory), so a Tab never hangs the shell and a
// second Tab asks nothing. Prints nothing when the server does not answer.

#include <ostream>
#include <string>
#include <vector>

#include "cli/client_commands.h"

namespace orch {

// The kinds: jobs (ids, newest first), clusters, nodes (names), states (job states; no server
// needed), classes (the priority classes of the jobs the server lists).
const std::vector<std::string>& completion_kinds();

inline constexpr int kCompleteTimeoutMs = 1500;  // the whole answer, or nothing
inline constexpr long long kCompleteCacheTtlMs = 5000;

// Prints the words of `kind`; exit 0 even when the server gave none (the shell shows nothing),
// kExitUsage for a kind not in completion_kinds(). now_ms: the wall clock (tests pass their own).
int run_complete(const ClientOptions& o, const std::string& kind, long long now_ms,
                 std::ostream& out);

}  // namespace orch
