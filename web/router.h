#pragma once
// A small method + path router over the plain HttpRequest/HttpResponse values, and the
// helpers every route uses to answer JSON or an RFC 9457 problem. No Beast here.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"
#include "web/http/http_types.h"
#include "web/http/problem_response.h"
#include "web/route_table.h"

namespace orch {

class Router {
 public:
  // pattern: "/api/v1/jobs/{id}/attempts". A "{name}" segment matches any one non-empty
  // segment. Routes are tried in the order they were added. Without a lane, GET routes read and
  // every other method is a command.
  void add(std::string method, const std::string& pattern, RouteHandler handler,
           std::optional<Lane> lane = std::nullopt);
  // A row of the route table (route_table.h): its method, path, lane, handler and role.
  void add(const RouteRow& row);

  // The lane of the route that dispatch() would run; read when none matches (a 404 or 405 is
  // cheap to answer).
  Lane lane_of(const HttpRequest& request) const;

  // The route dispatch() would run, as "METHOD /pattern" (the form describe() lists), or nullopt
  // when none matches the method and path (dispatch answers 404 or 405).
  std::optional<std::string> route_of(const HttpRequest& request) const;

  // The role the route dispatch() would run needs (its row's), or nullopt when no route
  // matches or the route was added without a row (the access guard answers that 500).
  std::optional<Role> role_of(const HttpRequest& request) const;

  // The "{name}" values (percent-decoded) of the route dispatch() would run; nullopt when none
  // matches. For the access guard, which checks an attempt credential against its {token}.
  std::optional<PathParams> params_of(const HttpRequest& request) const;

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
    Lane lane = Lane::read;
    std::optional<Role> role;
  };
  const Route* find(const HttpRequest& request) const;  // by method and shape
  static std::string describe(const Route& route);
  std::vector<Route> routes_;
};

// Every row of table added to router, in order.
void add_rows(Router& router, const RouteTable& table);

// json_response and problem_response (web/http/problem_response.h) come with this header.
// The HTTP status for an error kind (invalid -> 400; the caller upgrades to 422 where due).
int status_for(ErrorKind kind);
HttpResponse error_response(const Error& error);

}  // namespace orch
