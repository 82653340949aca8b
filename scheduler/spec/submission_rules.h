#pragma once
// What a submitter may ask of a job (docs/security.md, docs/scheduling.md): the team it runs for
// must be one of the submitter's (default: the first), and its priority must be one the team
// may use: a class open to it (a class with `teams:` is for those teams only) and not above the
// team's `max_priority`, or when that is unset the highest class the team may use. Operators and
// admins may act for any team at any priority. Pure: the backend and the brain both apply them.

#include "scheduler/common/result.h"
#include "scheduler/model/submitter.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/job_spec.h"

namespace orch {

// Gives a job without a team the submitter's first; forbidden when the submitter may not act
// for the team the spec names (the message says which teams they may name).
Result<void> bind_team(JobSpec& spec, const Submitter& who);

// forbidden when the job's priority (its class, or an integer) is above what its team may use
// (the message names the classes it may use). A class that does not exist is left to
// resolve_priority.
Result<void> check_priority(const SchedulingSpec& scheduling, const JobSpec& spec,
                            const Submitter& who);

}  // namespace orch
