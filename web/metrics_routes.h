#pragma once
// GET /metrics: the fleet and the server's own health in Prometheus's text format, for the
// monitoring a team already runs (scrape it with a viewer token as a bearer token).

#include "web/metrics_api.h"
#include "web/refused_requests.h"
#include "web/router.h"

namespace orch {

// refused: the access guard's tally of refused requests, shown beside the backend's figures
// (null: none, as when the routes run without the guard).
RouteTable metrics_routes(MetricsApi& api, const RefusedRequests* refused = nullptr);

}  // namespace orch
