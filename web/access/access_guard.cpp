#include "web/access/access_guard.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iostream>
#include <utility>

#include "web/access/attempt_credential.h"
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

// How often the guard writes the sampled counts whose minute has ended.
constexpr Millis kSampleSweepMs = 1000;

// "10", "0.5": a rate as the clusters file wrote it.
std::string rate_text(double per_s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", per_s);
  return text;
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

AccessGuard::AccessGuard(const Router& router, AccessStore& store, GuardOptions options,
                         RefusedRequests& refused)
    : router_(router),
      store_(store),
      options_(std::move(options)),
      refused_(refused),
      limiter_(store.clock(), options_.rate_limits),
      anonymous_(store.clock()),
      throttled_(store.clock()) {}

AccessGuard::~AccessGuard() {
  for (RefusalSampler* sampler : {&anonymous_, &throttled_}) {
    for (const AuditRow& row : sampler->flush()) record(row);
  }
}

// A change over its caller's rate: 429, with when to retry. Reads are never limited here (their
// lane answers 503 when it is full).
std::optional<HttpResponse> AccessGuard::over_rate(const Identity& who) const {
  const RateLimiter::Verdict verdict = limiter_.take(who.user, who.role);
  if (verdict.allowed) return std::nullopt;
  const std::string retry = std::to_string(verdict.retry_after_s);
  HttpResponse r = problem_response(
      429, who.user + " (role " + to_string(who.role) + ") may make " +
               rate_text(verdict.rate.per_s) + " changes a second, " +
               std::to_string(verdict.rate.burst) + " at once; retry in " + retry +
               " s (the clusters file's server.rate_limits sets the rates; reads are not limited)");
  r.headers.emplace_back("Retry-After", retry);
  return r;
}

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
    // application/x-tar: a workdir upload (code_routes.h); like JSON, not a type a browser's
    // form can send without asking first, and the route checks it again.
    if (!bodiless && !routes::is_document_type(type) && type != "application/x-tar") {
      return refuse(
          problem_response(415,
                           "a request that changes something must be sent as application/json or "
                           "application/yaml" +
                               std::string(type.empty() ? "" : ", not " + type.substr(0, 80))));
    }
  }
  const std::optional<std::string> route = router_.route_of(request);
  if (route) audit.route = *route;
  const std::optional<Role> needed = router_.role_of(request);
  if (route && !needed) {
    std::cerr << "orchestrate: route " << *route << " has no row in the route table\n";
    return problem_response(500, "route " + *route + " has no role in the server's table");
  }
  const std::string token = bearer_token(request);
  // An attempt's credential opens its own route and nothing else, open routes included.
  if (is_attempt_credential(token)) return as_attempt(request, needed, token, audit);
  if (needed == Role::open) return router_.dispatch(request);

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
  request.caller_teams = who->teams;
  if (changes_state(request.method)) {
    if (auto slow = over_rate(*who)) return refuse(std::move(*slow));
  }
  if (!route) return router_.dispatch(request);  // 404 or 405, answered to a known caller
  if (!role_allows(who->role, *needed)) {
    return refuse(problem_response(403, who->user + " has role " + to_string(who->role) + "; " +
                                            *route + " needs role " + to_string(*needed) +
                                            " or above"));
  }
  return router_.dispatch(request);
}

// A request with an attempt's credential (attempt_credential.h): it may push that attempt's
// records and do nothing else. Not rate limited (every task of a gang pushes under the one
// credential, and the route is cheap); whether the attempt still lives is the route's to say (410).
HttpResponse AccessGuard::as_attempt(HttpRequest& request, std::optional<Role> needed,
                                     const std::string& credential, AuditRow& audit) const {
  auto refuse = [&audit](HttpResponse r) {
    audit.result = "refused";
    return r;
  };
  if (needed != Role::attempt) {
    return refuse(
        problem_response(403,
                         "an attempt's credential may only push that attempt's records (POST "
                         "/api/v1/attempts/{token}/records); it opens no other route"));
  }
  const std::optional<PathParams> params = router_.params_of(request);
  const std::string token = params && params->count("token") ? params->at("token") : "";
  if (credential.size() != kAttemptCredentialPrefix.size() + 64) {
    HttpResponse r = problem_response(401, "the attempt credential is malformed: \"" +
                                               std::string(kAttemptCredentialPrefix) +
                                               "\" and 64 hex digits expected");
    r.headers.emplace_back("WWW-Authenticate",
                           "Bearer realm=\"orchestrate\", error=\"invalid_token\"");
    return refuse(r);
  }
  if (!store_.attempt_credential_valid(token, credential)) {
    return refuse(
        problem_response(403, "this credential is not the one of attempt " + routes::shown(token) +
                                  ": an attempt's credential pushes only that attempt's records"));
  }
  audit.user = "attempt " + token.substr(0, 200);
  audit.role = to_string(Role::attempt);
  request.caller = audit.user;
  request.caller_role = audit.role;
  return router_.dispatch(request);
}

HttpResponse AccessGuard::handle(HttpRequest request) const {
  AuditRow audit;
  audit.method = request.method.substr(0, 16);
  audit.target = request.path.substr(0, 512);
  audit.remote = request.remote;
  HttpResponse response = decide(request, audit);
  if (audit.result == "refused") refused_.add(response.status);
  if (changes_state(request.method)) {
    audit.status = response.status;
    // A route's own 403 (a user cancelling another's job) is a refusal too.
    if (audit.result.empty()) {
      audit.result = response.status < 400 ? "ok" : response.status == 403 ? "refused" : "failed";
    }
    // An agent's accepted push is telemetry, a request a task each second: not a row each.
    const bool push = audit.role == to_string(Role::attempt) && audit.result == "ok";
    if (!push) write_audit(std::move(audit));
  }
  write_due_samples();
  add_safety_headers(response);
  return response;
}

// Every change of a known caller is a row, except 429s; those and every refusal before the
// caller is known are sampled: a flood from one place costs a row a minute, not a row each.
void AccessGuard::write_audit(AuditRow audit) const {
  const bool refused = audit.result == "refused";
  std::optional<AuditRow> row;
  if (refused && audit.user.empty()) {
    const std::string key = audit.remote;
    row = anonymous_.note(key, std::move(audit));
  } else if (refused && audit.status == 429) {
    const std::string key = audit.user;
    row = throttled_.note(key, std::move(audit));
  } else {
    row = std::move(audit);
  }
  if (row) record(*row);
}

// The counts of floods that have ended, written by whichever request comes first after each
// second: no thread of its own, and one request a second pays for the pass over the keys.
void AccessGuard::write_due_samples() const {
  const Millis now = store_.clock().now_ms();
  Millis next = next_sweep_ms_.load(std::memory_order_relaxed);
  if (now < next || !next_sweep_ms_.compare_exchange_strong(next, now + kSampleSweepMs)) return;
  for (RefusalSampler* sampler : {&anonymous_, &throttled_}) {
    for (const AuditRow& row : sampler->due()) record(row);
  }
}

void AccessGuard::record(const AuditRow& row) const {
  if (auto r = store_.record(row); !r) {
    // The change is already made (or refused); the log line is what is left to account for it.
    std::cerr << "orchestrate: cannot write the audit log: " << r.error().message << "\n";
  }
}

}  // namespace orch
