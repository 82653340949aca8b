#pragma once
// The health routes of /api/v1 (issue 4): nodes and their standing, quarantine and release,
// burn-in and probes, the provider scorecards and a job's MFU history. Internal to web/:
// make_api_router adds them; see docs/rest-api.md.

#include "web/health_api.h"
#include "web/router.h"

namespace orch {

// Binds the health routes to backend (which must outlive router).
void add_health_routes(Router& router, HealthApi& backend);

}  // namespace orch
