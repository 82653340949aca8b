#include "scheduler/lifecycle/exit_classifier.h"

#include <csignal>

namespace orch {

ExitCause classify_exit(const ExitStatus& status, bool cancel_requested) {
  if (cancel_requested) return ExitCause::cancelled;
  if (status.cause) return *status.cause;
  if (status.node_lost) return ExitCause::node_lost;
  if (status.signal) return ExitCause::killed_by_signal;
  if (!status.exit_code) return ExitCause::lost;
  int code = *status.exit_code;
  if (code == 0) return ExitCause::succeeded;
  // A shell that does not exec its last command reports a child killed by SIGKILL or SIGTERM
  // as 128+N. Nobody in orchestrate sent it (no cancel was requested), so it is the machine's
  // doing: the OOM killer, a reboot, a preemption.
  if (code == 128 + SIGKILL || code == 128 + SIGTERM) return ExitCause::killed_by_signal;
  return ExitCause::user_error;
}

}  // namespace orch
