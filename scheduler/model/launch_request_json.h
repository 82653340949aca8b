#pragma once
// LaunchRequest and ProbeRequest <-> JSON: the payload of a launch row in the outbox, and what a
// provider records of a launch at the site (the local adapter's request.json).

#include <nlohmann/json.hpp>

#include "scheduler/model/site_types.h"

namespace orch {

nlohmann::json launch_request_to_json(const LaunchRequest& r);
Result<LaunchRequest> launch_request_from_json(const nlohmann::json& j);

// A job's secret references, {"VAR": {"secret": NAME}}: the form the job spec and the outbox both
// keep (never a value). A reference with an empty name (a job stored when specs named a file or
// a variable of the server) is written {"VAR": {"retired": "..."}} and read back as empty.
nlohmann::json secret_refs_to_json(const std::map<std::string, std::string>& refs);
std::map<std::string, std::string> secret_refs_from_json(const nlohmann::json& j);

// ProbeRequest <-> JSON: the payload of a probe row in the outbox.
nlohmann::json probe_request_to_json(const ProbeRequest& r);
Result<ProbeRequest> probe_request_from_json(const nlohmann::json& j);

}  // namespace orch
