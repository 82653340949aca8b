#pragma once
// Runs a helper program (nvidia-smi) and captures what it prints, with a deadline: a GPU that
// fell off the bus can make nvidia-smi hang for minutes, and the probe must still answer.

#include <string>
#include <vector>

namespace orch::agent {

struct CapturedRun {
  bool started = false;    // false: fork or exec failed (see error)
  bool timed_out = false;  // killed (SIGKILL) after the deadline
  int exit_code = -1;      // when it exited normally
  int signal = 0;          // when a signal ended it
  std::string out;         // stdout, at most 1 MiB
  std::string err;         // stderr, at most 64 KiB
  std::string error;       // why it did not start
};

// Runs argv (argv[0] is a path, not searched) with stdin from /dev/null and waits at most
// timeout_s seconds for it to exit. With own_group the program runs in a process group of its
// own, and what is left of that group is killed when it exits or times out (a program that
// starts processes of its own, as the torch probe does one per GPU, leaves none behind).
CapturedRun run_captured(const std::vector<std::string>& argv, double timeout_s,
                         bool own_group = false);

// The first executable file named `name` in $PATH, or "" when there is none.
std::string find_in_path(const std::string& name);

}  // namespace orch::agent
