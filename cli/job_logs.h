#pragma once
// `orchestrate job logs` and `orchestrate job submit --follow` (issue 41, item 5): a job's log
// through GET /api/v1/jobs/{id}/logs, filtered by cli/log_filter.h, and, when following, across
// its attempts until the job ends, with its events (GET /api/v1/jobs/{id}/events) for submit.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "cli/client_commands.h"
#include "cli/log_filter.h"

namespace orch {

struct LogsRequest {
  std::int64_t id = 0;
  std::optional<int> attempt;  // pinned; unset: the latest (following: each new one in turn)
  bool follow = false;
  LogFilterOptions filter;
};

// The log as it is now (every byte so far, not only the first MiB), or with follow every attempt
// from the latest on as it grows, until the job is terminal: a new attempt is announced on err
// as "--- attempt N on CLUSTER ---" after the previous one's last bytes. A --rank or --node that
// cannot match is a usage error. Exit 0 once the log is printed (whatever the job's state).
int run_job_logs(const ClientOptions& o, const LogsRequest& request, std::ostream& out,
                 std::ostream& err);

// `job submit FILE --follow`: submits (as run_job_submit, its id on out), then prints the job's
// events on err and its log on out as they come (every attempt from the first), until the job
// ends. Exit 0 when it succeeded, 1 when it failed or was cancelled (the final state on err), 2 for
// a sweep (it follows one job: the ids are printed and the next step named), else the call's.
int run_job_submit_follow(const ClientOptions& o, const std::string& file, std::ostream& out,
                          std::ostream& err, std::uint64_t workdir_limit,
                          const LogFilterOptions& filter = {}, const SubmitExtras& extras = {});

}  // namespace orch
