#pragma once
// A request as Beast parsed it, as the plain HttpRequest the router takes: header names in
// lower case, repeated headers joined with ", ". Shared by the server and the HTTP fuzz target
// (tests/fuzz), so the target routes exactly what the server would. Includes Beast's message
// types: include it only from web/ and tests/fuzz.

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "web/http_types.h"

namespace orch {

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;

HttpRequest to_plain(const BeastRequest& request);

}  // namespace orch
