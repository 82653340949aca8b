#pragma once
// What stands between the port and the routes (docs/security.md). For every request, in order:
//   1. the Host header must name this server (no DNS rebinding): 421 otherwise;
//   2. a request that changes something must send JSON or YAML (a browser's cross-site form or
//      text/plain POST needs no preflight, so those types are refused): 415;
//   3. a route other than the open ones needs "Authorization: Bearer <token>" of a live token:
//      401 otherwise (no cookies are ever read, so no page can borrow a session);
//   4. the token's role must allow the route (route_roles.h): 403 otherwise;
// then the router answers, with the caller named in the request. Every request that changes
// something (any method but GET and HEAD) is a row of the audit log, allowed or refused. Every
// answer carries headers that keep a browser from sniffing, framing or caching it.

#include <string>
#include <vector>

#include "web/access/access_store.h"
#include "web/http_types.h"
#include "web/router.h"

namespace orch {

struct GuardOptions {
  // The names the server answers to in the Host header (port left out), compared without case:
  // the loopback names always, plus the bind address and server.hosts of the clusters file.
  std::vector<std::string> hosts;
  // The admin token's file, named by /healthz to a client on this machine ("" for none).
  std::string token_file;
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
  AccessGuard(const Router& router, AccessStore& store, GuardOptions options);
  HttpResponse handle(HttpRequest request) const;

 private:
  HttpResponse decide(HttpRequest& request, AuditRow& audit) const;
  bool host_allowed(const std::string& host_header) const;
  const Router& router_;
  AccessStore& store_;
  GuardOptions options_;
};

// "Authorization: Bearer <token>" -> the token; "" when the header is absent or not Bearer.
std::string bearer_token(const HttpRequest& request);

}  // namespace orch
