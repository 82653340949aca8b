#include "web/access/access_routes.h"

#include "web/route_helpers.h"

namespace orch {
namespace {

using nlohmann::json;
using routes::read_limit;
using routes::read_object;
using routes::read_string;

constexpr int kDefaultAuditPage = 100;

HttpResponse create_token(AccessStore& store, const HttpRequest& request) {
  const std::string example =
      "{\"name\": \"alice\", \"role\": \"user\", \"teams\": [\"vision\", \"nlp\"]}";
  json body;
  if (auto bad = read_object(request, false, example, body)) return *bad;
  std::string name, role_text;
  if (auto bad = read_string(body, "name", true, example, name)) return *bad;
  if (auto bad = read_string(body, "role", true, example, role_text)) return *bad;
  const std::optional<Role> role = parse_role(role_text);
  if (!role) {
    return problem_response(
        422, "role must be viewer, user, operator or admin, got " + routes::shown(role_text));
  }
  std::vector<std::string> teams;
  if (auto bad = routes::read_string_list(body, "teams", false, example, teams)) return *bad;
  auto token = store.create_token(name, *role, request.caller, teams);
  if (!token) return routes::answer_body(token.error(), 201);
  return json_response(201, {{"name", name},
                             {"role", to_string(*role)},
                             {"teams", teams},
                             {"token", *token},
                             {"note", "shown once: the server keeps only its hash"}});
}

HttpResponse list_audit(AccessStore& store, const HttpRequest& request) {
  int limit = kDefaultAuditPage;
  if (auto bad = read_limit(request, limit)) return *bad;
  std::optional<std::int64_t> before;
  if (auto given = routes::query_value(request, "before"); given && !given->empty()) {
    auto id = routes::parse_id(*given, "before");
    if (!id) return error_response(id.error());
    before = *id;
  }
  auto page = store.audit(limit, before);
  if (!page) return error_response(page.error());
  json rows = json::array();
  for (const auto& row : page->rows) rows.push_back(audit_json(row));
  return json_response(
      200, {{"entries", rows}, {"next", page->next ? json(std::to_string(*page->next)) : json()}});
}

}  // namespace

json token_json(const TokenRow& row) {
  return {{"name", row.name},
          {"role", to_string(row.role)},
          {"teams", row.teams},
          {"created_by", row.created_by},
          {"created_ms", row.created_ms},
          {"revoked_ms", row.revoked_ms ? json(*row.revoked_ms) : json()},
          {"state", row.revoked_ms ? "revoked" : "live"}};
}

json audit_json(const AuditRow& row) {
  return {{"id", row.id},         {"at_ms", row.at_ms},   {"user", row.user},
          {"role", row.role},     {"method", row.method}, {"route", row.route},
          {"target", row.target}, {"status", row.status}, {"result", row.result},
          {"remote", row.remote}, {"count", row.count}};
}

RouteTable access_routes(AccessStore& store) {
  AccessStore* s = &store;
  return {{.method = "GET",
           .path = "/api/v1/tokens",
           .lane = Lane::read,
           .role = Role::admin,
           .tag = "access",
           .summary = "Every token's name, role and state (never a token)",
           .answer_schema = "TokenList",
           .handler =
               [s](const HttpRequest&, const PathParams&) {
                 auto rows = s->tokens();
                 if (!rows) return error_response(rows.error());
                 json out = json::array();
                 for (const auto& row : *rows) out.push_back(token_json(row));
                 return json_response(200, {{"tokens", out}});
               }},
          {.method = "POST",
           .path = "/api/v1/tokens",
           .lane = Lane::command,
           .role = Role::admin,
           .tag = "access",
           .summary = "Make a token; it is shown once",
           .body = Body::json_required,
           .body_schema = "TokenRequest",
           .ok = 201,
           .answer_schema = "NewToken",
           .errors = {409, 422},
           .handler = [s](const HttpRequest& request,
                          const PathParams&) { return create_token(*s, request); }},
          {.method = "POST",
           .path = "/api/v1/tokens/{name}/revoke",
           .lane = Lane::command,
           .role = Role::admin,
           .tag = "access",
           .summary = "Refuse a user's token from now on",
           .answer_schema = "Token",
           .errors = {404},
           .handler =
               [s](const HttpRequest&, const PathParams& params) {
                 auto row = s->revoke_token(params.at("name"));
                 if (!row) return error_response(row.error());
                 return json_response(200, token_json(*row));
               }},
          {.method = "GET",
           .path = "/api/v1/audit",
           .lane = Lane::read,
           .role = Role::admin,
           .tag = "access",
           .summary = "Who changed what, allowed or refused, newest first",
           .query = {{"limit", "integer", "1 to 1000 (default 100)"},
                     {"before", "integer", "entries older than this id"}},
           .answer_schema = "AuditPage",
           .errors = {400},
           .handler = [s](const HttpRequest& request,
                          const PathParams&) { return list_audit(*s, request); }},
          {.method = "GET",
           .path = "/api/v1/whoami",
           .lane = Lane::read,
           .role = Role::viewer,
           .tag = "access",
           .summary = "The token's user and role",
           .answer_schema = "Whoami",
           .handler =  // Who the token is: the page shows it and offers only what the role may do.
           [](const HttpRequest& request, const PathParams&) {
             return json_response(200, {{"user", request.caller},
                                        {"role", request.caller_role},
                                        {"teams", request.caller_teams}});
           }}};
}

}  // namespace orch
