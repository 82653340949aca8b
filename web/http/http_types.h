#pragma once
// Plain request and response values. The server (Beast) converts to and from these, so the
// routes and their tests never see a socket or a Beast type.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/common/percent_encoding.h"  // percent_encode/decode, used with targets

namespace orch {

struct HttpRequest {
  std::string method;                          // "GET", "POST", ... (upper case)
  std::string path;                            // "/api/v1/jobs/7", without the query string
  std::map<std::string, std::string> query;    // decoded query parameters
  std::map<std::string, std::string> headers;  // keys in lower case
  std::string body;
  std::string remote;  // the peer's address, set by the server ("" in tests that build one)
  // Who is calling, set by the access guard once the token is known (web/access): the token's
  // user, role and the teams the token is bound to; empty before that and on open routes.
  std::string caller;
  std::string caller_role;
  std::vector<std::string> caller_teams;

  // The header's value, or "" when absent. name is matched case-insensitively.
  std::string header(const std::string& name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra: Location, Allow, ...

  // The first header of that name (case-insensitive), or "".
  std::string header(const std::string& name) const;
};

// Splits "/a/b?x=1&y=%20" into a path and decoded query parameters. A repeated key keeps its
// last value; a key without '=' maps to "".
void parse_target(const std::string& target, std::string& path,
                  std::map<std::string, std::string>& query);

// Builds a request from a raw target (path plus query), for tests and the server.
HttpRequest make_request(std::string method, const std::string& target, std::string body = "",
                         std::string content_type = "");

// Whether a peer address ("127.0.0.1", "::1", "::ffff:127.0.0.1") is this machine's loopback.
bool is_loopback_address(const std::string& address);
// is_loopback_address, or the name "localhost", or "[::1]" as a URL writes it: a host that means
// this machine (a bind address, a server URL's host).
bool is_loopback_host(const std::string& host);

// The standard reason phrase, e.g. 404 -> "Not Found"; "Unknown" when not known here.
const char* status_title(int status);

}  // namespace orch
