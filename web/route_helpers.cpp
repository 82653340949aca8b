// Shared pieces of the REST routes (route_helpers.h).
#include "web/route_helpers.h"

#include <cctype>
#include <utility>

namespace orch::routes {

using nlohmann::json;

std::string shown(const std::string& value) {
  if (value.size() <= 64) return "'" + value + "'";
  return "'" + value.substr(0, 61) + "...'";
}

Result<std::int64_t> parse_id(const std::string& text, const char* what) {
  auto value = parse_unsigned_digits<std::int64_t>(text);
  if (!value || *value <= 0) {
    return make_error(ErrorKind::invalid,
                      std::string(what) + " must be a positive integer, got " + shown(text));
  }
  return *value;
}

std::optional<std::string> query_value(const HttpRequest& request, const std::string& key) {
  auto it = request.query.find(key);
  if (it == request.query.end()) return std::nullopt;
  return it->second;
}

HttpResponse answer(const Result<nlohmann::json>& result, int ok_status) {
  if (!result.ok()) return error_response(result.error());
  return json_response(ok_status, result.value());
}

HttpResponse answer(const Result<JsonText>& result) {
  if (!result.ok()) return error_response(result.error());
  HttpResponse response;
  response.status = 200;
  response.content_type = "application/json";
  response.body = result.value().text;
  return response;
}

RouteHandler with_job_id(std::function<HttpResponse(const HttpRequest&, std::int64_t)> route) {
  return [route = std::move(route)](const HttpRequest& request, const PathParams& params) {
    auto id = parse_id(params.at("id"), "job id");
    if (!id.ok()) return error_response(id.error());
    return route(request, id.value());
  };
}

std::optional<HttpResponse> read_positive(const HttpRequest& request, const std::string& key,
                                          int max, int& value) {
  auto text = query_value(request, key);
  if (!text) return std::nullopt;
  auto parsed = parse_unsigned_digits<int>(*text);
  if (!parsed || *parsed < 1 || *parsed > max) {
    return problem_response(400, key + " must be an integer from 1 to " + std::to_string(max) +
                                     ", got " + shown(*text));
  }
  value = *parsed;
  return std::nullopt;
}

std::optional<HttpResponse> read_limit(const HttpRequest& request, int& limit) {
  return read_positive(request, "limit", kMaxListLimit, limit);
}

std::optional<HttpResponse> read_cursor(const HttpRequest& request, std::int64_t& cursor) {
  auto text = query_value(request, "cursor");
  if (!text || text->empty()) return std::nullopt;
  auto id = parse_unsigned_digits<std::int64_t>(*text);
  if (!id || *id < 1) {
    return problem_response(
        400, "cursor must be the \"next\" value of a previous page, got " + shown(*text));
  }
  cursor = *id;
  return std::nullopt;
}

// The body as a JSON object, or the problem to answer: 400 when it is not JSON (or missing and
// required), 422 when it is JSON but not an object. An empty body is {} when optional.
std::optional<HttpResponse> read_object(const HttpRequest& request, bool optional,
                                        const std::string& example, json& body) {
  if (request.body.find_first_not_of(" \t\r\n") == std::string::npos) {
    if (optional) {
      body = json::object();
      return std::nullopt;
    }
    return problem_response(400, "the request body is empty; expected " + example);
  }
  body = json::parse(request.body, nullptr, false);
  if (body.is_discarded()) {
    return problem_response(400, "the request body is not valid JSON; expected " + example);
  }
  if (!body.is_object()) return problem_response(422, "expected a JSON object, e.g. " + example);
  return std::nullopt;
}

// body[key] as a string into value; a 422 problem when it is there but not a string, or
// missing and required.
std::optional<HttpResponse> read_string(const json& body, const std::string& key, bool required,
                                        const std::string& example, std::string& value) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) {
    if (!required) return std::nullopt;
    return problem_response(422, "\"" + key + "\" is required, e.g. " + example);
  }
  if (!it->is_string()) {
    return problem_response(422, "\"" + key + "\" must be a string, e.g. " + example);
  }
  value = it->get<std::string>();
  return std::nullopt;
}

std::optional<HttpResponse> read_string_list(const json& body, const std::string& key,
                                             bool required, const std::string& example,
                                             std::vector<std::string>& values) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) {
    if (!required) return std::nullopt;
    return problem_response(422, "\"" + key + "\" is required, e.g. " + example);
  }
  bool ok = it->is_array();
  for (const auto& v : ok ? *it : json::array()) ok = ok && v.is_string();
  if (!ok)
    return problem_response(422, "\"" + key + "\" must be a list of strings, e.g. " + example);
  values.clear();
  for (const auto& v : *it) values.push_back(v.get<std::string>());
  return std::nullopt;
}

std::string media_type(const std::string& content_type) {
  std::string out = content_type.substr(0, content_type.find(';'));
  const auto b = out.find_first_not_of(" \t");
  out = b == std::string::npos ? "" : out.substr(b);
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_document_type(const std::string& type) {
  return type == "application/json" || type == "application/yaml" || type == "application/x-yaml" ||
         type == "text/yaml" || type == "text/x-yaml";
}

std::optional<HttpResponse> read_document(const HttpRequest& request, const std::string& what,
                                          std::string& source) {
  const std::string type = media_type(request.header("content-type"));
  if (!type.empty() && !is_document_type(type)) {
    return problem_response(415, "unsupported Content-Type " + shown(type) + "; send " + what +
                                     " as application/yaml or application/json");
  }
  if (request.body.find_first_not_of(" \t\r\n") == std::string::npos) {
    return problem_response(400, "the request body is empty; send " + what + " in YAML or JSON");
  }
  source = query_value(request, "source").value_or("");
  if (source.empty()) source = "request body";
  return std::nullopt;
}

HttpResponse answer_body(const Result<json>& result, int ok_status) {
  if (!result.ok() && result.error().kind == ErrorKind::invalid) {
    return problem_response(422, result.error().message);
  }
  return answer(result, ok_status);
}

}  // namespace orch::routes
