#pragma once
// The check right before a launch that resumes (issue 5): the candidates, newest first, are
// listed and hashed at the site and compared with their registered manifests; the first that
// matches is used. A missing, partial or corrupt copy is never resumed from: it is reported as
// rejected (the brain marks it and says so in the job's events). Runs on the site worker's thread.

#include <vector>

#include "scheduler/cluster_port.h"

namespace orch {

// ErrorKind::unreachable when the site did not answer (the caller retries the launch later).
// A provider that cannot list storage (unsupported) gets the newest candidate unchecked.
Result<ResumeChoice> check_resume_candidates(ClusterPort& port,
                                             const std::vector<ResumeCandidate>& candidates);

}  // namespace orch
