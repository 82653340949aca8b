#pragma once
// The health routes of /api/v1 (issue 4): nodes and their standing, quarantine and release,
// burn-in and probes, the provider scorecards and a job's MFU history. Internal to web/:
// api_routes() adds them; see docs/rest-api.md.

#include "web/health_api.h"
#include "web/route_table.h"
#include "web/router.h"

namespace orch {

// The rows, bound to backend (which must outlive them).
RouteTable health_routes(HealthApi& backend);

}  // namespace orch
