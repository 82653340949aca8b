#pragma once
// Reads a job spec from YAML (or JSON, which is YAML too) into a JobSpec, validating every
// field. Errors name the source, line and column and say what was expected; see
// docs/config.md for the format.

#include <string_view>

#include "scheduler/common/result.h"
#include "scheduler/spec/job_spec.h"

namespace orch {

// Never throws. Errors are ErrorKind::invalid with a message of the form
// "<source_name>:<line>:<col>: <what is wrong>; expected <what was expected>".
Result<JobSpec> parse_job_spec(std::string_view yaml_text, std::string_view source_name);

}  // namespace orch
