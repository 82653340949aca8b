#pragma once
// GET /api/v1/openapi.json: an OpenAPI 3.1 description of every route of the server, its
// parameters, its bodies and its problem+json errors. One table (openapi.cpp) lists the
// operations; tests/unit/access/openapi_test.cpp fails when the router has a route the table
// lacks, or the other way round.

#include <nlohmann/json.hpp>

#include "web/router.h"

namespace orch {

// The whole document.
const nlohmann::json& openapi_document();

void add_openapi_route(Router& router);

}  // namespace orch
