#pragma once
// The alerts of a local run's tasks (issue 43: io stalls; scheduler/model/task_alert.h), read
// from each task's newest complete record for RunObservation::alerts.

#include <string>
#include <vector>

#include "adapters/local/run_dir.h"
#include "scheduler/model/site_types.h"

namespace orch::local {

// The last complete line of a task's event file (a record being written has no newline yet),
// reading only its last 64 KiB; "" when there is none.
std::string read_last_record(const std::string& events_path);

// The io stall each of the run's `tasks` tasks states in its newest record, by rank.
std::vector<TaskAlert> read_task_alerts(const RunPaths& paths, int tasks);

}  // namespace orch::local
