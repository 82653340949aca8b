#pragma once
// A pod's container as a local process: started in its own session (so that signals reach the
// whole tree), stdin from /dev/null, stdout and stderr appended to the pod's log file, and
// SIGKILLed by the kernel if the thread that started it dies (PR_SET_PDEATHSIG), so that a
// crashed test leaves no container behind.
// Only the children the fake started are ever waited for (never waitpid(-1)), so the fake can
// run inside a test binary that has children of its own.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace orch::fake_kube {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is a path (see find_executable)
  std::vector<std::string> env;   // "NAME=value"
  std::string cwd;
  std::string log_path;
};

struct SpawnResult {
  pid_t pid = -1;     // > 0 when started
  std::string error;  // why not, e.g. "chdir /x: No such file or directory"
};

SpawnResult spawn_process(const ProcessSpec& spec);

// The wait status once the process has exited (it is reaped then), nullopt while it runs.
std::optional<int> poll_exit(pid_t pid);

// Sends sig to the process group the process leads (its whole tree).
void signal_group(pid_t pid, int sig);

// `name` itself when it contains '/', else the first executable NAME in the ':'-separated
// search path; "" when there is none.
std::string find_executable(const std::string& name, const std::string& search_path);

}  // namespace orch::fake_kube
