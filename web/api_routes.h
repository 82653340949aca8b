#pragma once
// The REST API, /api/v1, over an ApiBackend. See docs/rest-api.md for every route.

#include <vector>

#include "web/api_backend.h"
#include "web/http/http_server.h"
#include "web/http/http_types.h"
#include "web/refused_requests.h"
#include "web/route_table.h"
#include "web/router.h"

namespace orch {

// The rows of every API route (route_table.h), bound to backend (which must outlive them):
// /healthz, jobs and clusters, node health, tickets, data, secrets and /metrics. The access
// routes, the page and the OpenAPI document are added by web/access/guarded_api.h.
// refused: the access guard's tally, which GET /metrics shows (null: none).
RouteTable api_routes(ApiBackend& backend, const RefusedRequests* refused = nullptr);

// The router with every API route bound to backend (which must outlive it). Build it once
// and share it: dispatch() is const and safe to call from several server threads as long
// as the backend is.
// refused: the access guard's tally, which GET /metrics shows (null: none). /healthz names no
// file and no path to anyone (a client finds its token where it was told: cli/client_token.h).
Router make_api_router(ApiBackend& backend, const RefusedRequests* refused = nullptr);

// The server's lanes for these routes, indexed by Lane (pass Router::lane_of as lane_of).
std::vector<LaneOptions> api_lanes();

// One request, one answer; never throws. Convenient for tests; builds the router each call.
HttpResponse handle_api(ApiBackend& backend, const HttpRequest& request);

}  // namespace orch
