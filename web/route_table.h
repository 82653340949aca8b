#pragma once
// One declarative row per route: its method and path, the server lane that runs it, the least
// role that may call it, what the OpenAPI document says of it, and its handler. Each area's
// file (api_routes.cpp, health_routes.cpp, data_routes.cpp, ...) returns its rows; from the one
// table are built the router (Router::add(row)), the access guard's roles (Router::role_of) and
// the OpenAPI document (openapi.h). No Beast here.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "web/http/http_types.h"

namespace orch {

// Values captured by "{name}" segments of a pattern, percent-decoded.
using PathParams = std::map<std::string, std::string>;
using RouteHandler = std::function<HttpResponse(const HttpRequest&, const PathParams&)>;

// Which of the server's lanes (thread pools, see ServerOptions and api_lanes()) answers a
// route. A route that waits for something slow gets a lane of its own so that it cannot hold
// the threads of others:
//   probe    - the health probe: answers however busy everything else is
//   read     - reads of the state database
//   command  - changes that wait for the brain's answer
//   provider - calls that reach a site's provider (logs over SSH, an outage switch)
enum class Lane { probe, read, command, provider };
inline constexpr std::size_t kLaneCount = 4;
const char* to_string(Lane lane);

// The least role a caller's token must hold (web/access/role.h has the rest: names, order):
// open < viewer < user < operator < admin; `open` needs no token at all. `attempt` is outside
// the order: only an attempt's agent, with its credential (web/access/attempt_credential.h), may
// call such a route, for its own attempt, and no API token may (issue 44).
enum class Role { open, viewer, user, operator_, admin, attempt };

// A query parameter as the OpenAPI document shows it; type: string | integer | boolean.
struct QueryParam {
  std::string name;
  std::string type;
  std::string description;
};

// What a request carries: nothing, a JSON object, a document (YAML or JSON), or an archive
// (application/x-tar: a workdir upload, code_routes.h).
enum class Body { none, json_optional, json_required, document, archive };

// What a success carries: JSON (of answer_schema), plain text, the page's files, Prometheus.
enum class Answer { json, text, html_or_file, metrics };

struct RouteRow {
  std::string method;  // "GET"
  std::string path;    // "/api/v1/jobs/{id}"; "{name}" matches any one non-empty segment
  Lane lane;
  Role role;
  std::string tag;      // the OpenAPI tag: the area (jobs, clusters, nodes, data, ...)
  std::string summary;  // one line, docs/rest-api.md's words
  std::vector<QueryParam> query = {};
  Body body = Body::none;
  std::string body_schema = "";    // a components/schemas name when body != none
  int ok = 200;                    // the success status
  std::string answer_schema = "";  // a components/schemas name when answer == json
  Answer answer = Answer::json;
  std::vector<int> errors = {};  // besides 401/403/429/415, which the document adds itself
  RouteHandler handler = nullptr;

  std::string route() const { return method + " " + path; }  // "GET /api/v1/jobs/{id}"
};

using RouteTable = std::vector<RouteRow>;

// Appends rows to table (moving them).
void append(RouteTable& table, RouteTable rows);

}  // namespace orch
