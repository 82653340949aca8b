#include "web/http/problem_response.h"

namespace orch {

HttpResponse json_response(int status, const nlohmann::json& body) {
  HttpResponse response;
  response.status = status;
  response.content_type = "application/json";
  // Replace invalid UTF-8 rather than throw: a job name or log line must never crash a route.
  response.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return response;
}

HttpResponse problem_response(int status, const std::string& detail) {
  nlohmann::json body = {{"type", "about:blank"},
                         {"title", status_title(status)},
                         {"status", status},
                         {"detail", detail}};
  HttpResponse response = json_response(status, body);
  response.content_type = "application/problem+json";
  return response;
}

}  // namespace orch
