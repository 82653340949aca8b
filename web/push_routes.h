#pragma once
// The route an attempt's agents push their records home to (issue 44, docs/rest-api.md "Records
// pushed home"): POST /api/v1/attempts/{token}/records, role `attempt` (only that attempt's
// credential opens it: web/access/access_guard.h). Internal to web/: GuardedApi adds it.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "web/push_api.h"
#include "web/route_table.h"

namespace orch {

// The row, bound to push (which must outlive it); null: a server that takes no pushes (501).
RouteTable push_routes(PushApi* push);

// The body read into a batch for token, or the 400 problem's detail naming the field (and the
// record's index) that is wrong and why.
std::optional<std::string> read_push_batch(const nlohmann::json& body, PushBatch& batch);

}  // namespace orch
