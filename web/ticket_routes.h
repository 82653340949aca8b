#pragma once
// The support-ticket routes of /api/v1 (issue 15): open, list, show, note and close tickets
// with a cluster's provider. The work is the backend's (HealthApi); bodies are checked here.

#include "web/health_api.h"
#include "web/router.h"

namespace orch {

RouteTable ticket_routes(HealthApi& backend);

}  // namespace orch
