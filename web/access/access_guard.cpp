#include "web/access/access_guard.h"

#include <algorithm>
#include <cctype>
#include <iostream>

#include "web/access/route_roles.h"
#include "web/route_helpers.h"

namespace orch {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool changes_state(const std::string& method) {
  return method != "GET" && method != "HEAD";
}

// "host:port", "[v6]:port" or "host" -> the host, in lower case.
std::string host_of(const std::string& header) {
  std::string h = lower(trim(header));
  if (!h.empty() && h.front() == '[') {
    const auto close = h.find(']');
    return close == std::string::npos ? h : h.substr(0, close + 1);
  }
  const auto colon = h.find(':');
  return colon == std::string::npos ? h : h.substr(0, colon);
}

void add_safety_headers(HttpResponse& r) {
  auto set = [&r](const char* name, const char* value) {
    if (r.header(name).empty()) r.headers.emplace_back(name, value);
  };
  set("X-Content-Type-Options", "nosniff");
  set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
  set("X-Frame-Options", "DENY");
  set("Referrer-Policy", "no-referrer");
  set("Cache-Control", "no-store");
}

}  // namespace

std::vector<std::string> answered_hosts(const std::string& bind,
                                        const std::vector<std::string>& extra) {
  std::vector<std::string> out = {"localhost", "127.0.0.1", "[::1]"};
  auto add = [&out](std::string h) {
    h = lower(trim(h));
    if (h.empty()) return;
    if (h.find(':') != std::string::npos && h.front() != '[') h = "[" + h + "]";  // a v6 address
    if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
  };
  if (bind != "0.0.0.0" && bind != "::" && bind != "[::]") add(bind);
  for (const auto& h : extra) add(h);
  return out;
}

BindVerdict judge_bind(const std::string& bind, bool serves_tls, bool insecure_bind) {
  if (is_loopback_host(bind) || serves_tls) return {};
  if (!insecure_bind) {
    return {false,
            "refusing to serve on " + bind +
                " without TLS: tokens and job specs would cross the network in clear text. Give "
                "the server a certificate (server.tls: {cert, key} in the clusters file), bind "
                "to 127.0.0.1 (and reach it over SSH), or pass --insecure-bind if the network in "
                "between is yours"};
  }
  return {true, "serving on " + bind +
                    " without TLS (--insecure-bind): anyone on the path can read the API tokens"};
}

std::string bearer_token(const HttpRequest& request) {
  const std::string value = trim(request.header("authorization"));
  if (value.size() < 7 || lower(value.substr(0, 7)) != "bearer ") return "";
  return trim(value.substr(7));
}

AccessGuard::AccessGuard(const Router& router, AccessStore& store, GuardOptions options)
    : router_(router), store_(store), options_(std::move(options)) {}

bool AccessGuard::host_allowed(const std::string& host_header) const {
  const std::string host = host_of(host_header);
  return std::find(options_.hosts.begin(), options_.hosts.end(), host) != options_.hosts.end();
}

HttpResponse AccessGuard::decide(HttpRequest& request, AuditRow& audit) const {
  // What the guard itself turns away (as against what a route answers with an error).
  auto refuse = [&audit](HttpResponse r) {
    audit.result = "refused";
    return r;
  };
  if (request.header("host").empty()) {
    return refuse(problem_response(400, "the request has no Host header"));
  }
  if (!host_allowed(request.header("host"))) {
    return refuse(problem_response(421,
                                   "this server does not answer to the host in the Host header; "
                                   "name it in the clusters file's server.hosts to allow it"));
  }
  if (changes_state(request.method)) {
    const std::string type = routes::media_type(request.header("content-type"));
    const bool bodiless = request.body.empty() && type.empty();
    if (!bodiless && !routes::is_document_type(type)) {
      return refuse(
          problem_response(415,
                           "a request that changes something must be sent as application/json or "
                           "application/yaml" +
                               std::string(type.empty() ? "" : ", not " + type.substr(0, 80))));
    }
  }
  const std::optional<std::string> route = router_.route_of(request);
  if (route) audit.route = *route;
  const std::optional<Role> needed = route ? role_for_route(*route) : std::nullopt;
  if (route && !needed) {
    std::cerr << "orchestrate: route " << *route << " has no entry in the role table\n";
    return problem_response(500, "route " + *route + " has no role in the server's table");
  }
  if (needed == Role::open) return router_.dispatch(request);

  const std::string token = bearer_token(request);
  if (token.empty()) {
    HttpResponse r = problem_response(
        401,
        "this route needs an API token: send \"Authorization: Bearer <token>\" (the CLI "
        "reads ORCH_TOKEN, ~/.config/orchestrate/token or a local server's admin.token)");
    r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"orchestrate\"");
    return refuse(r);
  }
  const std::optional<Identity> who = store_.identify(token);
  if (!who) {
    HttpResponse r = problem_response(401,
                                      "the API token is not valid: it was revoked or never "
                                      "issued by this server");
    r.headers.emplace_back("WWW-Authenticate",
                           "Bearer realm=\"orchestrate\", error=\"invalid_token\"");
    return refuse(r);
  }
  audit.user = who->user;
  audit.role = to_string(who->role);
  request.caller = who->user;
  request.caller_role = to_string(who->role);
  if (!route) return router_.dispatch(request);  // 404 or 405, answered to a known caller
  if (!role_allows(who->role, *needed)) {
    return refuse(problem_response(403, who->user + " has role " + to_string(who->role) + "; " +
                                            *route + " needs role " + to_string(*needed) +
                                            " or above"));
  }
  return router_.dispatch(request);
}

HttpResponse AccessGuard::handle(HttpRequest request) const {
  AuditRow audit;
  audit.method = request.method.substr(0, 16);
  audit.target = request.path.substr(0, 512);
  audit.remote = request.remote;
  HttpResponse response = decide(request, audit);
  if (changes_state(request.method)) {
    audit.status = response.status;
    // A route's own 403 (a user cancelling another's job) is a refusal too.
    if (audit.result.empty()) {
      audit.result = response.status < 400 ? "ok" : response.status == 403 ? "refused" : "failed";
    }
    if (auto r = store_.record(std::move(audit)); !r) {
      // The change is already made (or refused); the log line is what is left to account for it.
      std::cerr << "orchestrate: cannot write the audit log: " << r.error().message << "\n";
    }
  }
  add_safety_headers(response);
  return response;
}

}  // namespace orch
