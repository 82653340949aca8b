#pragma once
// A small method + path router over the plain HttpRequest/HttpResponse values, and the
// helpers every route uses to answer JSON or an RFC 9457 problem. No Beast here.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"
#include "web/http_types.h"

namespace orch {

// Values captured by "{name}" segments of a pattern, percent-decoded.
using PathParams = std::map<std::string, std::string>;
using RouteHandler = std::function<HttpResponse(const HttpRequest&, const PathParams&)>;

// Which of the server's lanes (thread pools, see ServerOptions) answers a route. A route that
// waits for something slow gets a lane of its own so that it cannot hold the threads of others:
//   probe    - the health probe: answers however busy everything else is
//   read     - reads of the state database
//   command  - changes that wait for the brain's answer
//   provider - calls that reach a site's provider (logs over SSH, an outage switch)
enum class Lane { probe, read, command, provider };
inline constexpr std::size_t kLaneCount = 4;
const char* to_string(Lane lane);

class Router {
 public:
  // pattern: "/api/v1/jobs/{id}/attempts". A "{name}" segment matches any one non-empty
  // segment. Routes are tried in the order they were added. Without a lane, GET routes read and
  // every other method is a command.
  void add(std::string method, const std::string& pattern, RouteHandler handler,
           std::optional<Lane> lane = std::nullopt);

  // The lane of the route that dispatch() would run; read when none matches (a 404 or 405 is
  // cheap to answer).
  Lane lane_of(const HttpRequest& request) const;

  // The route dispatch() would run, as "METHOD /pattern" (the form describe() lists), or nullopt
  // when none matches the method and path (dispatch answers 404 or 405).
  std::optional<std::string> route_of(const HttpRequest& request) const;

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
  };
  const Route* find(const HttpRequest& request) const;  // by method and shape
  static std::string describe(const Route& route);
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
