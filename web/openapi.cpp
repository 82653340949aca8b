// The OpenAPI 3.1 document built from the route table (openapi.h).
#include "web/openapi.h"

#include <cctype>
#include <memory>
#include <string>
#include <vector>

#include "web/openapi_schemas.h"

namespace orch {
namespace {

using nlohmann::json;

json type(const std::string& t) {
  return {{"type", t}};
}

json operation(const RouteRow& op) {
  const bool open = op.role == Role::open;
  json o = {{"summary", op.summary}, {"tags", {op.tag}}};
  json parameters = json::array();
  std::string path = op.path;
  for (std::size_t at = path.find('{'); at != std::string::npos; at = path.find('{', at + 1)) {
    const std::string name = path.substr(at + 1, path.find('}', at) - at - 1);
    parameters.push_back({{"name", name},
                          {"in", "path"},
                          {"required", true},
                          {"schema", type(name == "id" ? "integer" : "string")}});
  }
  for (const QueryParam& q : op.query) {
    parameters.push_back({{"name", q.name},
                          {"in", "query"},
                          {"required", false},
                          {"description", q.description},
                          {"schema", type(q.type)}});
  }
  if (!parameters.empty()) o["parameters"] = parameters;
  if (op.body != Body::none) {
    json content;
    if (op.body == Body::document) {
      content["application/yaml"] = {{"schema", schema_ref(op.body_schema)}};
    }
    if (op.body == Body::archive) {
      content["application/x-tar"] = {{"schema", schema_ref(op.body_schema)}};
    } else {
      content["application/json"] = {{"schema", schema_ref(op.body_schema)}};
    }
    o["requestBody"] = {{"required", op.body != Body::json_optional}, {"content", content}};
  }
  json ok = {{"description", "success"}};
  switch (op.answer) {
    case Answer::json:
      ok["content"]["application/json"] = {{"schema", schema_ref(op.answer_schema)}};
      break;
    case Answer::text:
      ok["content"]["text/plain"] = {{"schema", type("string")}};
      break;
    case Answer::html_or_file:
      ok["content"]["text/html"] = {{"schema", type("string")}};
      break;
    case Answer::metrics:
      ok["content"]["text/plain; version=0.0.4"] = {{"schema", type("string")}};
      break;
  }
  json responses = {{std::to_string(op.ok), ok}};
  std::vector<int> errors = op.errors;
  if (!open) {
    errors.push_back(401);
    errors.push_back(403);
    // A change over its caller's rate (server.rate_limits); an attempt's pushes have none.
    if (op.method != "GET" && op.role != Role::attempt) errors.push_back(429);
  }
  if (op.body != Body::none) errors.push_back(415);
  for (int status : errors) {
    responses[std::to_string(status)] = {{"$ref", "#/components/responses/Problem"}};
  }
  o["responses"] = responses;
  if (open) o["security"] = json::array();
  return o;
}

}  // namespace

json openapi_document(const RouteTable& table) {
  json paths = json::object();
  for (const RouteRow& op : table) {
    std::string method = op.method;
    for (char& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    paths[op.path][method] = operation(op);
  }
  return {
      {"openapi", "3.1.0"},
      {"info",
       {{"title", "orchestrate"},
        {"version", "1"},
        {"description", "The REST API of orchestrate serve; docs/rest-api.md has the details."}}},
      {"paths", paths},
      {"security", json::array({{{"bearer", json::array()}}})},
      {"components",
       {{"securitySchemes",
         {{"bearer",
           {{"type", "http"},
            {"scheme", "bearer"},
            {"description",
             "an API token (orchestrate token create NAME --role R); on POST "
             "/api/v1/attempts/{token}/records only, the attempt's credential (orch_att_...)"}}}}},
        {"responses",
         {{"Problem",
           {{"description", "an error, as RFC 9457 problem details"},
            {"content", {{"application/problem+json", {{"schema", schema_ref("Problem")}}}}}}}}},
        {"schemas", openapi_schemas()}}},
  };
}

void append_openapi_route(RouteTable& table) {
  table.push_back({.method = "GET",
                   .path = "/api/v1/openapi.json",
                   .lane = Lane::read,
                   .role = Role::open,  // the API's description: no data in it
                   .tag = "server",
                   .summary = "This document",
                   .answer_schema = "OpenApiDocument"});
  // Built once, from every row and this one.
  auto document = std::make_shared<const json>(openapi_document(table));
  table.back().handler = [document](const HttpRequest&, const PathParams&) {
    return json_response(200, *document);
  };
}

}  // namespace orch
