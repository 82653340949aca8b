#pragma once
// JSON answers over the plain HttpResponse: a JSON body, and an RFC 9457 problem
// (application/problem+json), which the server writes itself for what a handler cannot answer
// (503 on a full lane, 500 when a handler throws) and every route writes for its errors.

#include <string>

#include <nlohmann/json.hpp>

#include "web/http/http_types.h"

namespace orch {

// 200-style JSON answer. Invalid UTF-8 in a string is replaced, never thrown.
HttpResponse json_response(int status, const nlohmann::json& body);
// application/problem+json: {"type":"about:blank","title":..,"status":..,"detail":..}.
HttpResponse problem_response(int status, const std::string& detail);

}  // namespace orch
