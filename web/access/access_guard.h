#pragma once
// What stands between the port and the routes (docs/security.md). For every request, in order:
//   1. the Host header must name this server (no DNS rebinding): 421 otherwise;
//   2. a request that changes something must send JSON or YAML (a browser's cross-site form or
//      text/plain POST needs no preflight, so those types are refused): 415;
//   3. a route other than the open ones needs "Authorization: Bearer <token>" of a live token:
//      401 otherwise (no cookies are ever read, so no page can borrow a session);
//   4. a change (any method but GET and HEAD) takes a token from its caller's bucket
//      (rate_limiter.h): 429 with Retry-After when it is empty;
//   5. the token's role must allow the route (its row's role, route_table.h): 403 otherwise;
//      a bearer "orch_att_..." is an attempt's credential (attempt_credential.h), never a token:
//      it opens only POST /api/v1/attempts/{token}/records for its own {token} (403 anywhere
//      else, open routes included), is not rate limited, and its accepted pushes are no audit rows;
// then the router answers, with the caller named in the request. Every change by a caller with
// a valid token is a row of the audit log, allowed or refused; refusals that come in floods
// (those before a caller is known, and 429s) are counted and written at most once a minute per
// remote (or user) and status, with their count (refusal_sampler.h). Every refusal counts in
// GET /metrics. Every answer carries headers that keep a browser from sniffing, framing or
// caching it.

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/model/rate_limits.h"
#include "web/access/access_store.h"
#include "web/access/rate_limiter.h"
#include "web/access/refusal_sampler.h"
#include "web/http/http_types.h"
#include "web/refused_requests.h"
#include "web/router.h"

namespace orch {

struct GuardOptions {
  // The names the server answers to in the Host header (port left out), compared without case:
  // the loopback names always, plus the bind address and server.hosts of the clusters file.
  std::vector<std::string> hosts;
  // How many changes each caller may make, by role (clusters file server.rate_limits).
  RateLimits rate_limits;
};

// The loopback names and, when given, bind (unless it is a wildcard) and extra.
std::vector<std::string> answered_hosts(const std::string& bind,
                                        const std::vector<std::string>& extra);

// Whether the server may listen on bind: a loopback address always; any other only over TLS,
// or when the operator passed --insecure-bind. ok false: message is the refusal; ok true with
// a message: the warning to log at every start.
struct BindVerdict {
  bool ok = true;
  std::string message;
};
BindVerdict judge_bind(const std::string& bind, bool serves_tls, bool insecure_bind);

class AccessGuard {
 public:
  // refused: where each refusal is counted (GET /metrics reads it). Times come from the
  // store's clock.
  AccessGuard(const Router& router, AccessStore& store, GuardOptions options,
              RefusedRequests& refused);
  ~AccessGuard();  // writes the sampled refusals not yet written
  AccessGuard(const AccessGuard&) = delete;
  AccessGuard& operator=(const AccessGuard&) = delete;
  HttpResponse handle(HttpRequest request) const;

 private:
  HttpResponse decide(HttpRequest& request, AuditRow& audit) const;
  HttpResponse as_attempt(HttpRequest& request, std::optional<Role> needed,
                          const std::string& credential, AuditRow& audit) const;
  std::optional<HttpResponse> over_rate(const Identity& who) const;
  void write_audit(AuditRow audit) const;
  void write_due_samples() const;
  void record(const AuditRow& row) const;
  bool host_allowed(const std::string& host_header) const;
  const Router& router_;
  AccessStore& store_;
  GuardOptions options_;
  RefusedRequests& refused_;
  mutable RateLimiter limiter_;
  mutable RefusalSampler anonymous_;  // refusals before a caller is known, by remote address
  mutable RefusalSampler throttled_;  // 429s, by user
  mutable std::atomic<Millis> next_sweep_ms_{0};
};

// "Authorization: Bearer <token>" -> the token; "" when the header is absent or not Bearer.
std::string bearer_token(const HttpRequest& request);

}  // namespace orch
