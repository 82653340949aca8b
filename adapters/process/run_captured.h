#pragma once
// A program run to its end with a deadline: what it printed and how it ended. The child runs in
// a process group of its own (child_process.h), so the deadline stops whatever it started too.

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "adapters/process/child_process.h"
#include "scheduler/common/result.h"

namespace orch::process {

struct RunOptions {
  std::chrono::milliseconds timeout{10000};
  std::vector<std::string> env;  // "NAME=value", added to this process's environment
  // At the deadline: SIGTERM to the group, this long to end, then SIGKILL. 0: SIGKILL at once.
  std::chrono::milliseconds grace{0};
  // Stdout beyond this is read and dropped (a chatty child never blocks on a full pipe), or,
  // with kill_on_overflow, ends the run: the group is killed and `overflowed` set.
  std::size_t max_out = std::size_t{1} << 20;
  bool kill_on_overflow = false;
  // Of stderr, the last this many bytes are kept (where a failure says why).
  std::size_t max_err = std::size_t{1} << 20;
};

struct CapturedRun {
  ChildExit exit;           // exit_code >= 0 when it exited, else the signal that ended it
  bool timed_out = false;   // still running at the deadline, and stopped
  bool overflowed = false;  // stdout passed max_out with kill_on_overflow, and killed
  std::string out;
  std::string err;
};

// Errors: io when it cannot be started. How it ended (a status, a signal, the deadline) is in
// the result, not an error.
Result<CapturedRun> run_captured(const std::vector<std::string>& argv, const RunOptions& options);

}  // namespace orch::process
