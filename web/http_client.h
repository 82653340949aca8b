#pragma once
// A small synchronous HTTP/1.1 client for the CLI (Boost.Beast, kept out of this header).
// One connection per call; plain http only (orchestrate serve binds to loopback by default).
// token, when given, goes as "Authorization: Bearer <token>".

#include <string>

#include "scheduler/common/result.h"
#include "web/http_types.h"

namespace orch {

// base_url: "http://HOST[:PORT][/prefix]". target: "/api/v1/jobs?state=running".
// Any HTTP status is a successful Result (the caller reads the problem body); errors are:
// invalid for a bad base_url, unreachable when the server cannot be reached or answers
// nothing within timeout_ms (the message says what to do).
Result<HttpResponse> http_request(const std::string& base_url, const std::string& method,
                                  const std::string& target, const std::string& body = "",
                                  const std::string& content_type = "application/json",
                                  int timeout_ms = 10000, const std::string& token = "");

// The pieces of a base URL; exposed for tests and for messages.
struct ServerUrl {
  std::string host;
  std::string port;
  std::string prefix;  // "" or "/something", without a trailing slash
};
Result<ServerUrl> parse_server_url(const std::string& base_url);

}  // namespace orch
