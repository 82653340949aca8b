#pragma once
// A request as Beast parsed it, as the plain HttpRequest the router takes: header names in
// lower case, repeated headers joined with ", ". Shared by the server and the HTTP fuzz target
// (tests/fuzz), so the target routes exactly what the server would. Includes Beast's message
// types: include it only from web/ and tests/fuzz.

#include <optional>
#include <string>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "web/http/http_types.h"

namespace orch {

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;

HttpRequest to_plain(const BeastRequest& request);

// Why the server will not take a request whose headers were just read, and closes the
// connection after saying so: where the body ends would be in doubt, and a proxy in front
// that reads it otherwise would see the rest as another request (request smuggling).
struct FramingRefusal {
  int status = 400;
  std::string detail;
};

// 501 for any Transfer-Encoding other than exactly one "chunked" (case and blanks aside) on an
// HTTP/1.1 request without Content-Length; 400 for an HTTP/1.1 request without exactly one
// Host header. nullopt when the request's framing is sound.
std::optional<FramingRefusal> framing_refusal(const BeastRequest& header);

}  // namespace orch
