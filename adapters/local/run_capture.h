#pragma once
// Running a short-lived helper (the agent's `probe`) to completion and keeping what it printed.
// Unlike spawn_detached, the caller waits: the child is in its own process group, and at the
// deadline the whole group is SIGKILLed, so a hung helper (or anything it started) cannot keep
// the site worker waiting.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/common/result.h"

namespace orch::local {

struct CapturedRun {
  std::optional<int> exit_code;  // set when it exited normally
  std::optional<int> signal;     // set when a signal ended it (SIGKILL at the deadline)
  bool timed_out = false;        // it was still running at the deadline and was killed
  std::string out;               // stdout, at most max_output bytes
  std::string err;               // stderr, at most max_output bytes
};

// Runs argv (argv[0] an absolute path, executed as is) with this process's environment, stdin
// from /dev/null. Output beyond max_output bytes per stream is read and dropped, so a chatty
// helper cannot block on a full pipe. An error only when it could not be started.
Result<CapturedRun> run_captured(const std::vector<std::string>& argv,
                                 std::chrono::milliseconds timeout,
                                 std::size_t max_output = 1 << 20);

// A number as a command-line argument, in the shortest form that reads back the same: 600 ->
// "600", 0.2 -> "0.2".
std::string format_arg(double value);

}  // namespace orch::local
