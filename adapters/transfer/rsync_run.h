#pragma once
// One rsync process watched from start to end: its progress read as it comes, the caller asked
// about stopping and about the cap while it runs, and a process that goes silent killed. The
// transfer (rsync_transfer.h) strings runs together: restarts for a new cap, the relay's two
// legs.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "adapters/process/child_process.h"
#include "adapters/transfer/rsync_progress.h"
#include "scheduler/common/result.h"

namespace orch::transfer {

struct RunCommand {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // added to this process's environment ("LC_ALL=C")
  // Called before the local process is stopped early (the pull route stops the rsync it runs
  // on a login node); may be empty.
  std::function<void()> stop_remote;
};

struct RunWatch {
  // The newest progress of this run, at most once per `progress_every` counted from
  // *last_progress (shared by the runs of one transfer, so restarts do not add calls).
  std::function<void(const RsyncProgressLine&)> progress;
  std::chrono::steady_clock::time_point* last_progress = nullptr;
  // Checked every poll (about 10 times a second): true stops the run (RunEnd::stopped).
  std::function<bool()> stop;
  // Checked once per `restart_check_every`: true stops the run (RunEnd::restart).
  std::function<bool()> restart;
  std::chrono::milliseconds poll_every{100};
  std::chrono::milliseconds progress_every{250};
  std::chrono::milliseconds restart_check_every{1000};
  std::chrono::milliseconds stall_timeout{120000};  // no output this long: RunEnd::stalled
  std::chrono::milliseconds stop_grace{10000};      // SIGTERM to SIGKILL
};

enum class RunEnd { exited, stopped, restart, stalled };

struct RunResult {
  RunEnd end = RunEnd::exited;
  process::ChildExit exit;  // how the process ended (exited: its status)
  std::uint64_t bytes = 0;  // the run's last progress figure
  bool had_progress = false;
  std::string err;  // everything it wrote on stderr
  double seconds = 0;
};

// Runs the command to its end (or until watch stops it). Errors: io when it cannot start.
Result<RunResult> run_rsync(const RunCommand& command, const RunWatch& watch);

}  // namespace orch::transfer
