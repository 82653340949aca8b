#include "web/secret_routes.h"

#include "scheduler/common/base64.h"
#include "web/route_helpers.h"

namespace orch {
namespace {

using nlohmann::json;

constexpr const char* kSetExample =
    R"({"value_base64": "aGYtdG9rZW4=", "teams": ["nlp"]} or {"value": "text", "teams": []})";
constexpr const char* kGrantExample = R"({"teams": ["nlp", "vision"]})";

// The value from "value" (text) or "value_base64" (any bytes), exactly one of them.
std::optional<HttpResponse> read_value(const json& body, std::string& value) {
  std::string text, encoded;
  if (auto bad = routes::read_string(body, "value", false, kSetExample, text)) return bad;
  if (auto bad = routes::read_string(body, "value_base64", false, kSetExample, encoded)) return bad;
  if (body.contains("value") == body.contains("value_base64")) {
    return problem_response(422,
                            std::string("give the secret's value as exactly one of \"value\" and "
                                        "\"value_base64\"; send ") +
                                kSetExample);
  }
  if (body.contains("value")) {
    value = std::move(text);
    return std::nullopt;
  }
  auto decoded = decode_base64(encoded);
  if (!decoded) return problem_response(422, "\"value_base64\" is not base64");
  value = std::move(*decoded);
  return std::nullopt;
}

HttpResponse set_secret(SecretsApi& backend, const HttpRequest& request, const std::string& name) {
  json body;
  if (auto bad = routes::read_object(request, false, kSetExample, body)) return *bad;
  std::string value;
  if (auto bad = read_value(body, value)) return *bad;
  std::vector<std::string> teams;
  if (auto bad = routes::read_string_list(body, "teams", false, kSetExample, teams)) return *bad;
  return routes::answer_body(backend.set_secret(name, value, teams, request.caller), 200);
}

HttpResponse grant_secret(SecretsApi& backend, const HttpRequest& request,
                          const std::string& name) {
  json body;
  if (auto bad = routes::read_object(request, false, kGrantExample, body)) return *bad;
  std::vector<std::string> teams;  // [] grants every team
  if (auto bad = routes::read_string_list(body, "teams", true, kGrantExample, teams)) return *bad;
  return routes::answer_body(backend.grant_secret(name, teams, request.caller), 200);
}

}  // namespace

RouteTable secret_routes(SecretsApi& backend) {
  SecretsApi* b = &backend;
  return {{.method = "GET",
           .path = "/api/v1/secrets",
           .lane = Lane::read,
           .role = Role::viewer,
           .tag = "access",
           .summary = "Every secret a job may name, with its grants and age (never a value)",
           .answer_schema = "SecretList",
           .handler = [b](const HttpRequest&,
                          const PathParams&) { return routes::answer(b->list_secrets()); }},
          {.method = "PUT",
           .path = "/api/v1/secrets/{name}",
           .lane = Lane::read,
           .role = Role::admin,
           .tag = "access",
           .summary = "Create or replace a secret and its grants",
           .body = Body::json_required,
           .body_schema = "SecretRequest",
           .answer_schema = "Secret",
           .errors = {409, 422},
           .handler = [b](const HttpRequest& request,
                          const PathParams& p) { return set_secret(*b, request, p.at("name")); }},
          {.method = "POST",
           .path = "/api/v1/secrets/{name}/grant",
           .lane = Lane::read,
           .role = Role::admin,
           .tag = "access",
           .summary = "Replace the teams a secret is granted to",
           .body = Body::json_required,
           .body_schema = "SecretGrant",
           .answer_schema = "Secret",
           .errors = {404, 409, 422},
           .handler = [b](const HttpRequest& request,
                          const PathParams& p) { return grant_secret(*b, request, p.at("name")); }},
          {.method = "DELETE",
           .path = "/api/v1/secrets/{name}",
           .lane = Lane::read,
           .role = Role::admin,
           .tag = "access",
           .summary = "Delete a secret: jobs that name it are not launched again",
           .answer_schema = "Object",
           .errors = {404, 409},
           .handler = [b](const HttpRequest&, const PathParams& p) {
             return routes::answer(b->delete_secret(p.at("name")));
           }}};
}

}  // namespace orch
