#pragma once
// A job file's `after:` key (issue 45, docs/config.md "Dependencies: `after`"):
//
//   after:
//     - {job: train}                   # the newest job named train, to succeed
//     - {job: 12, state: ended}        # job 12, to end in any way
//
// The parser checks shapes; the brain resolves each `job` at submit (AfterSpec::id) and refuses
// unknown jobs and cycles there.

#include <optional>
#include <string>
#include <string_view>

#include "scheduler/spec/job_spec.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

std::optional<AfterState> parse_after_state(std::string_view s);

// Reads `after:` of `job` into spec.after, recording the first bad value in the reader: not a
// list, an entry that is not {job, state}, a job that is neither a name nor an id, an unknown
// state, a job listed twice.
void read_after(const yaml::MapView& job, JobSpec& spec);

// The variable that gives a dependent the newest verified checkpoint of the job it waits for:
// ORCH_AFTER_<NAME>_CHECKPOINT, NAME upper-cased with every character outside [A-Z0-9] as "_".
std::string after_checkpoint_env(std::string_view job_name);

}  // namespace orch
