#pragma once
// Maps how an attempt ended (the provider's exit status) to a cause: classify_failure
// (failure_classifier.h) without a log. The rule table of log signatures (Xid, NCCL, disk full,
// ...) is in failure_rules.cpp; the budget a cause spends is is_infra_cause().

#include "scheduler/model/job_state.h"
#include "scheduler/model/site_types.h"

namespace orch {

// cancel_requested: orchestrate asked the attempt to stop, so whatever it died of is "cancelled".
ExitCause classify_exit(const ExitStatus& status, bool cancel_requested);

}  // namespace orch
