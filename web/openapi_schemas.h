#pragma once
// The OpenAPI document's shared component schemas (components/schemas): what each route's body
// and answer look like, as the backend builds them (web/backend/*.cpp). A route's row names
// them (RouteRow::body_schema, answer_schema); openapi.cpp builds the paths from the rows.

#include <string>

#include <nlohmann/json.hpp>

namespace orch {

// Every schema by name.
nlohmann::json openapi_schemas();

// {"$ref": "#/components/schemas/<name>"}.
nlohmann::json schema_ref(const std::string& name);

}  // namespace orch
