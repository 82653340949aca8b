#include "scheduler/lifecycle/exit_classifier.h"

#include "scheduler/lifecycle/failure_classifier.h"

namespace orch {

// One path: the failure classifier without a log is the exit-status classifier.
ExitCause classify_exit(const ExitStatus& status, bool cancel_requested) {
  return classify_failure(FailureEvidence{status, cancel_requested, {}}).cause;
}

}  // namespace orch
