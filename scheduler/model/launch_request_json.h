#pragma once
// LaunchRequest and ProbeRequest <-> JSON: the payload of a launch row in the outbox, and what a
// provider records of a launch at the site (the local adapter's request.json).

#include <nlohmann/json.hpp>

#include "scheduler/model/site_types.h"

namespace orch {

nlohmann::json launch_request_to_json(const LaunchRequest& r);
Result<LaunchRequest> launch_request_from_json(const nlohmann::json& j);

// Where each secret comes from, {"NAME": {"file": PATH} | {"env": VAR}}: the form the job spec
// and the outbox both keep (never a value).
nlohmann::json secret_sources_to_json(const std::map<std::string, SecretSource>& sources);

// ProbeRequest <-> JSON: the payload of a probe row in the outbox.
nlohmann::json probe_request_to_json(const ProbeRequest& r);
Result<ProbeRequest> probe_request_from_json(const nlohmann::json& j);

}  // namespace orch
