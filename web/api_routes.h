#pragma once
// The REST API, /api/v1, over an ApiBackend. See docs/rest-api.md for every route.

#include <vector>

#include "web/api_backend.h"
#include "web/http_server.h"
#include "web/http_types.h"
#include "web/router.h"

namespace orch {

// The router with every API route bound to backend (which must outlive it). Build it once
// and share it: dispatch() is const and safe to call from several server threads as long
// as the backend is.
// local_token_file: the admin token's file, which /healthz names to a caller on this machine
// ("" names none).
Router make_api_router(ApiBackend& backend, const std::string& local_token_file = "");

// The server's lanes for these routes, indexed by Lane (pass Router::lane_of as lane_of).
std::vector<LaneOptions> api_lanes();

// One request, one answer; never throws. Convenient for tests; builds the router each call.
HttpResponse handle_api(ApiBackend& backend, const HttpRequest& request);

}  // namespace orch
