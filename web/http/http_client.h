#pragma once
// A small synchronous HTTP/1.1 client for the CLI (Boost.Beast, kept out of this header).
// One connection per call, http or https. Over https the server's certificate must be signed by
// a CA of the system trust store, or of the ca_file given, and be issued for the URL's host.

#include <string>
#include <utility>
#include <vector>

#include "scheduler/common/http_url.h"
#include "scheduler/common/result.h"
#include "web/http/http_types.h"

namespace orch {

struct RequestOptions {
  int timeout_ms = 10000;  // the whole exchange: connect, TLS handshake, write and read
  std::string token;       // sent as "Authorization: Bearer <token>" when not empty
  std::string ca_file;     // https: trust this PEM bundle instead of the system store
  std::vector<std::pair<std::string, std::string>> headers;  // more request headers
};

// base_url: "http[s]://HOST[:PORT][/prefix]". target: "/api/v1/jobs?state=running".
// Any HTTP status is a successful Result (the caller reads the problem body); errors are:
// invalid for a bad base_url or an unreadable ca_file, unreachable when the server cannot be
// reached, answers nothing within timeout_ms or shows a certificate this client does not trust
// (the message names the server and says what to do).
Result<HttpResponse> http_request(const std::string& base_url, const std::string& method,
                                  const std::string& target, const std::string& body,
                                  const std::string& content_type, const RequestOptions& options);
inline Result<HttpResponse> http_request(const std::string& base_url, const std::string& method,
                                         const std::string& target, const std::string& body = "",
                                         const std::string& content_type = "application/json",
                                         int timeout_ms = 10000, const std::string& token = "") {
  return http_request(base_url, method, target, body, content_type,
                      RequestOptions{timeout_ms, token, "", {}});
}

// ServerUrl and parse_server_url (the pieces of a base URL) are scheduler/common/http_url.h's.

}  // namespace orch
