#pragma once
// What every REST route file shares: reading ids and query parameters into values or a 400
// problem, and answering a backend's Result. Internal to web/ (api_routes.cpp, health_routes.cpp).

#include <charconv>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"
#include "web/http/http_types.h"
#include "web/jobs_api.h"
#include "web/router.h"

namespace orch::routes {

inline constexpr int kMaxListLimit = 1000;

// Shows a user's value in a message without letting a huge one flood it.
std::string shown(const std::string& value);

// Digits only, no sign, no spaces, fits in T.
template <typename T>
std::optional<T> parse_unsigned_digits(const std::string& text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  T value{};
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

// A path id: a positive 64-bit integer, or an invalid error saying what was wrong.
Result<std::int64_t> parse_id(const std::string& text, const char* what);

std::optional<std::string> query_value(const HttpRequest& request, const std::string& key);

// The backend's JSON with ok_status, or its error as a problem.
HttpResponse answer(const Result<nlohmann::json>& result, int ok_status = 200);
// 200 with the text as it is, or the error's problem.
HttpResponse answer(const Result<JsonText>& result);

// Wraps a route that takes a job id from {id}: a bad id is a 400 before the backend runs.
RouteHandler with_job_id(std::function<HttpResponse(const HttpRequest&, std::int64_t)> route);

// ?<key>= when given: an integer from 1 to max into `value`, else a 400 problem to answer with.
std::optional<HttpResponse> read_positive(const HttpRequest& request, const std::string& key,
                                          int max, int& value);
// ?limit= when given: 1..kMaxListLimit.
std::optional<HttpResponse> read_limit(const HttpRequest& request, int& limit);
// ?cursor= when given: the "next" of a previous page (a positive id) into `cursor`, else a 400.
std::optional<HttpResponse> read_cursor(const HttpRequest& request, std::int64_t& cursor);

// The body as a JSON object, or the problem to answer: 400 when it is not JSON (or missing and
// required), 422 when it is JSON but not an object. An empty body is {} when optional.
std::optional<HttpResponse> read_object(const HttpRequest& request, bool optional,
                                        const std::string& example, nlohmann::json& body);
// body[key] as a string into value; a 422 problem when it is there but not a string, or
// missing and required.
std::optional<HttpResponse> read_string(const nlohmann::json& body, const std::string& key,
                                        bool required, const std::string& example,
                                        std::string& value);
// body[key] as a list of strings into values; a 422 problem when it is there but not one, or
// missing and required.
std::optional<HttpResponse> read_string_list(const nlohmann::json& body, const std::string& key,
                                             bool required, const std::string& example,
                                             std::vector<std::string>& values);
// "application/yaml; charset=utf-8" -> "application/yaml" (trimmed, lower case).
std::string media_type(const std::string& content_type);
// The types a body that changes something may have: JSON or YAML. Never text/plain or a form
// type, which a browser sends cross-site without a preflight (web/access/access_guard.h).
bool is_document_type(const std::string& media_type);

// A body that is a document (a job spec, a clusters document) in YAML or JSON, checked before
// its parser reads it: the problem to answer when its Content-Type is not YAML or JSON (415) or it
// is empty (400), naming `what` it should hold. source: ?source= (the client's file name, for the
// parser's errors), else "request body".
std::optional<HttpResponse> read_document(const HttpRequest& request, const std::string& what,
                                          std::string& source);
// The backend's answer to a body's content: its invalid is 422 (the body was well-formed).
HttpResponse answer_body(const Result<nlohmann::json>& result, int ok_status);

}  // namespace orch::routes
