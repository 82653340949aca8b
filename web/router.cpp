#include "web/router.h"

#include <exception>
#include <iostream>

namespace orch {
namespace {

// "/a/b/" -> {"a", "b"}; empty segments from doubled or trailing slashes are dropped.
std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool is_param(const std::string& segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

// Whether the path fits the pattern: as many segments, and every literal one equal.
bool same_shape(const std::vector<std::string>& pattern, const std::vector<std::string>& path) {
  if (pattern.size() != path.size()) return false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (!is_param(pattern[i]) && pattern[i] != path[i]) return false;
  }
  return true;
}

// same_shape, and the "{name}" segments' values, percent-decoded, into params.
bool match(const std::vector<std::string>& pattern, const std::vector<std::string>& path,
           PathParams& params) {
  if (!same_shape(pattern, path)) return false;
  PathParams found;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (is_param(pattern[i])) {
      found[pattern[i].substr(1, pattern[i].size() - 2)] = percent_decode(path[i], false);
    }
  }
  params = std::move(found);
  return true;
}

}  // namespace

const char* to_string(Lane lane) {
  switch (lane) {
    case Lane::probe:
      return "probe";
    case Lane::read:
      return "read";
    case Lane::command:
      return "command";
    case Lane::provider:
      return "provider";
  }
  return "read";
}

void Router::add(std::string method, const std::string& pattern, RouteHandler handler,
                 std::optional<Lane> lane) {
  const Lane chosen = lane.value_or(method == "GET" ? Lane::read : Lane::command);
  routes_.push_back(
      Route{std::move(method), split_path(pattern), std::move(handler), chosen, std::nullopt});
}

void Router::add(const RouteRow& row) {
  routes_.push_back(Route{row.method, split_path(row.path), row.handler, row.lane, row.role});
}

void add_rows(Router& router, const RouteTable& table) {
  for (const RouteRow& row : table) router.add(row);
}

void append(RouteTable& table, RouteTable rows) {
  for (RouteRow& row : rows) table.push_back(std::move(row));
}

const Router::Route* Router::find(const HttpRequest& request) const {
  const auto segments = split_path(request.path);
  for (const Route& route : routes_) {
    if (route.method == request.method && same_shape(route.segments, segments)) return &route;
  }
  return nullptr;
}

Lane Router::lane_of(const HttpRequest& request) const {
  const Route* route = find(request);
  return route ? route->lane : Lane::read;
}

std::optional<Role> Router::role_of(const HttpRequest& request) const {
  const Route* route = find(request);
  return route ? route->role : std::nullopt;
}

std::optional<PathParams> Router::params_of(const HttpRequest& request) const {
  const Route* route = find(request);
  PathParams params;
  if (!route || !match(route->segments, split_path(request.path), params)) return std::nullopt;
  return params;
}

std::optional<std::string> Router::route_of(const HttpRequest& request) const {
  const Route* route = find(request);
  if (!route) return std::nullopt;
  return describe(*route);
}

std::string Router::describe(const Route& route) {
  std::string out = route.method + " ";
  for (const auto& segment : route.segments) out += "/" + segment;
  if (route.segments.empty()) out += "/";  // the root
  return out;
}

HttpResponse Router::dispatch(const HttpRequest& request) const {
  const auto segments = split_path(request.path);
  std::string allow;
  for (const Route& route : routes_) {
    PathParams params;
    if (!match(route.segments, segments, params)) continue;
    if (route.method != request.method) {
      if (allow.find(route.method) == std::string::npos) {
        allow += (allow.empty() ? "" : ", ") + route.method;
      }
      continue;
    }
    // A throwing handler is a bug: the client gets a 500 problem, the log says where.
    try {
      return route.handler(request, params);
    } catch (const std::exception& e) {
      std::cerr << "orchestrate: internal error in " << request.method << " " << request.path
                << ": " << e.what() << "\n";
      return problem_response(500, std::string("internal error: ") + e.what());
    } catch (...) {
      std::cerr << "orchestrate: internal error in " << request.method << " " << request.path
                << "\n";
      return problem_response(500, "internal error");
    }
  }
  if (!allow.empty()) {
    HttpResponse response = problem_response(
        405, "method " + request.method + " is not allowed on " + request.path + "; use " + allow);
    response.headers.emplace_back("Allow", allow);
    return response;
  }
  return problem_response(404, "no such route: " + request.path);
}

std::vector<std::string> Router::describe() const {
  std::vector<std::string> out;
  out.reserve(routes_.size());
  for (const Route& route : routes_) out.push_back(describe(route));
  return out;
}

int status_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid:
      return 400;
    case ErrorKind::not_found:
      return 404;
    case ErrorKind::conflict:
      return 409;
    case ErrorKind::forbidden:
      return 403;
    case ErrorKind::unsupported:
      return 501;
    case ErrorKind::unreachable:
    case ErrorKind::misconfigured:
      return 503;
    case ErrorKind::io:
    case ErrorKind::internal:
      return 500;
  }
  return 500;
}

HttpResponse error_response(const Error& error) {
  return problem_response(status_for(error.kind), error.message);
}

}  // namespace orch
