#pragma once
// A JobSpec as JSON: how the store keeps the spec with its job, and what the REST API
// returns. The JSON has the same shape as the YAML job spec (docs/config.md), so a stored
// spec is also a valid submission.

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"
#include "scheduler/spec/job_spec.h"

namespace orch {

// Every field, defaults included; optional fields that are unset are left out.
nlohmann::json job_spec_to_json(const JobSpec& spec);

// The inverse of job_spec_to_json: job_spec_from_json(job_spec_to_json(s)) == s for every
// spec that parse_job_spec accepts. Validates exactly as parse_job_spec does (it is the same
// parser); errors are ErrorKind::invalid. Never throws.
Result<JobSpec> job_spec_from_json(const nlohmann::json& json);

}  // namespace orch
