#pragma once
// A small method + path router over the plain HttpRequest/HttpResponse values, and the
// helpers every route uses to answer JSON or an RFC 9457 problem. No Beast here.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"
#include "web/http_types.h"

namespace orch {

// Values captured by "{name}" segments of a pattern, percent-decoded.
using PathParams = std::map<std::string, std::string>;
using RouteHandler = std::function<HttpResponse(const HttpRequest&, const PathParams&)>;

class Router {
 public:
  // pattern: "/api/v1/jobs/{id}/attempts". A "{name}" segment matches any one non-empty
  // segment. Routes are tried in the order they were added.
  void add(std::string method, const std::string& pattern, RouteHandler handler);

  // Runs the matching route. No path match -> 404; a path match under another method -> 405
  // with an Allow header. Exceptions from a handler become a 500 problem.
  HttpResponse dispatch(const HttpRequest& request) const;

  // Every route as "METHOD /pattern/{param}", in the order added (for tests that visit all).
  std::vector<std::string> describe() const;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    RouteHandler handler;
  };
  std::vector<Route> routes_;
};

// 200-style JSON answer.
HttpResponse json_response(int status, const nlohmann::json& body);
// application/problem+json: {"type":"about:blank","title":..,"status":..,"detail":..}.
HttpResponse problem_response(int status, const std::string& detail);
// The HTTP status for an error kind (invalid -> 400; the caller upgrades to 422 where due).
int status_for(ErrorKind kind);
HttpResponse error_response(const Error& error);

}  // namespace orch
