#pragma once
// The cluster and job routes of /api/v1: clusters and their nodes, an outage switch, jobs
// listed, submitted, shown, explained, followed (logs) and cancelled. Internal to web/:
// api_routes() adds them; see docs/rest-api.md.

#include "web/jobs_api.h"
#include "web/route_table.h"

namespace orch {

// The rows, bound to backend (which must outlive them).
RouteTable job_routes(JobsApi& backend);

}  // namespace orch
