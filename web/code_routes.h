#pragma once
// The code routes of /api/v1 (issue 40, docs/rest-api.md "Code"): a workdir archive asked
// for (GET /api/v1/code/{sha256}) and uploaded (PUT, body application/x-tar). Internal to web/:
// GuardedApi adds them.

#include "web/code_api.h"
#include "web/route_table.h"

namespace orch {

// The rows, bound to code (which must outlive them); null: a server without a code store,
// whose rows answer 501.
RouteTable code_routes(CodeApi* code);

// The path prefix of the upload, for the HTTP server's larger body limit.
inline constexpr const char* kCodeUploadPrefix = "/api/v1/code/";

}  // namespace orch
