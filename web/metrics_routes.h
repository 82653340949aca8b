#pragma once
// GET /metrics: the fleet and the server's own health in Prometheus's text format, for the
// monitoring a team already runs (scrape it with a viewer token as a bearer token).

#include "web/metrics_api.h"
#include "web/router.h"

namespace orch {

void add_metrics_route(Router& router, MetricsApi& api);

}  // namespace orch
