#pragma once
// The OpenAPI document's shared component schemas (components/schemas): what each route's body
// and answer look like, as the backend builds them (web/backend/*.cpp). A route's row names
// them (RouteRow::body_schema, answer_schema); openapi.cpp builds the paths from the rows.

#include <string>

#include <nlohmann/json.hpp>

namespace orch {

// Every schema by name.
nlohmann::json openapi_schemas();

// The main reads' answers (openapi_read_schemas.cpp), typed property by property: added to
// (and replacing the same names in) schemas.
void add_read_schemas(nlohmann::json& schemas);

// {"$ref": "#/components/schemas/<name>"}.
nlohmann::json schema_ref(const std::string& name);

}  // namespace orch
