#pragma once
// Starting an agent that outlives the server. The agent is a grandchild (double fork), so the
// server never has to reap it and a SIGKILLed server leaves it running; it leads its own session,
// so its pid is also the process group id that cancel and outage signal.

#include <sys/types.h>

#include <string>
#include <vector>

#include "scheduler/common/result.h"

namespace orch::local {

// The lock fd number the agent finds its lock on (pass "--lock-fd 3" in argv).
inline constexpr int kAgentLockFd = 3;

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] is an absolute path, executed as is
  std::vector<std::string> env;   // the complete environment, "KEY=VALUE"
  std::string cwd;
  std::string output_path;  // stdout and stderr, opened O_APPEND
  std::string lock_path;    // flock()ed exclusively before exec, left open as fd kAgentLockFd
};

// Returns the agent's pid once it has exec'd (so its lock is already held) or an error naming
// the step that failed. Safe to call from any thread: the children only make async-signal-safe
// calls between fork and exec.
Result<pid_t> spawn_detached(const SpawnSpec& spec);

}  // namespace orch::local
