#pragma once
// The OpenAPI 3.1 description of the server, built from the route table (route_table.h): a
// path and operation per row (its parameters, body, answer and problem+json errors), the
// shared component schemas from openapi_schemas.h. GET /api/v1/openapi.json serves it.

#include <nlohmann/json.hpp>

#include "web/route_table.h"
#include "web/router.h"

namespace orch {

// The document describing exactly the rows of table.
nlohmann::json openapi_document(const RouteTable& table);

// Appends the row of GET /api/v1/openapi.json (open to anyone), which serves the document of
// table's rows and of itself, built once here: call it after every other row is in table.
void append_openapi_route(RouteTable& table);

}  // namespace orch
