#include "web/api_routes.h"

#include <charconv>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>

#include "scheduler/model/job_state.h"

namespace orch {
namespace {

constexpr int kMaxListLimit = 1000;
constexpr int kDefaultNodeEvents = 50;

// Shows a user's value in a message without letting a huge one flood it.
std::string shown(const std::string& value) {
  if (value.size() <= 64) return "'" + value + "'";
  return "'" + value.substr(0, 61) + "...'";
}

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

// A path id: a positive 64-bit integer, or a 400 problem saying what was wrong.
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

// "application/yaml; charset=utf-8" -> "application/yaml".
std::string media_type(const std::string& content_type) {
  std::string out = content_type.substr(0, content_type.find(';'));
  while (!out.empty() && out.back() == ' ') out.pop_back();
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

HttpResponse answer(const Result<nlohmann::json>& result, int ok_status = 200) {
  if (!result.ok()) return error_response(result.error());
  return json_response(ok_status, result.value());
}

// Wraps a route that takes a job id from {id}: a bad id is a 400 before the backend runs.
RouteHandler with_job_id(std::function<HttpResponse(const HttpRequest&, std::int64_t)> route) {
  return [route = std::move(route)](const HttpRequest& request, const PathParams& params) {
    auto id = parse_id(params.at("id"), "job id");
    if (!id.ok()) return error_response(id.error());
    return route(request, id.value());
  };
}

// ?limit= when given: 1..kMaxListLimit into `limit`, else a 400 problem to answer with.
std::optional<HttpResponse> read_limit(const HttpRequest& request, int& limit) {
  auto text = query_value(request, "limit");
  if (!text) return std::nullopt;
  auto value = parse_unsigned_digits<int>(*text);
  if (!value || *value < 1 || *value > kMaxListLimit) {
    return problem_response(400, "limit must be an integer from 1 to " +
                                     std::to_string(kMaxListLimit) + ", got " + shown(*text));
  }
  limit = *value;
  return std::nullopt;
}

HttpResponse cluster_nodes(ApiBackend& backend, const HttpRequest& request,
                           const std::string& cluster) {
  int limit = kDefaultNodeEvents;
  if (auto bad = read_limit(request, limit)) return *bad;
  return answer(backend.cluster_nodes(cluster, limit));
}

HttpResponse list_jobs(ApiBackend& backend, const HttpRequest& request) {
  JobFilter filter;
  if (auto state = query_value(request, "state"); state && !state->empty()) {
    if (!parse_job_state(*state)) {
      std::string names;
      for (JobState s : kAllJobStates)
        names += (names.empty() ? "" : ", ") + std::string(to_string(s));
      return problem_response(400,
                              "unknown job state " + shown(*state) + "; expected one of " + names);
    }
    filter.state = *state;
  }
  if (auto cluster = query_value(request, "cluster"); cluster && !cluster->empty()) {
    filter.cluster = *cluster;
  }
  if (auto bad = read_limit(request, filter.limit)) return *bad;
  return answer(backend.list_jobs(filter));
}

HttpResponse submit_job(ApiBackend& backend, const HttpRequest& request) {
  const std::string type = media_type(request.header("content-type"));
  if (!type.empty() && type != "application/yaml" && type != "text/yaml" &&
      type != "application/x-yaml" && type != "application/json" && type != "text/plain") {
    return problem_response(415, "unsupported Content-Type " + shown(type) +
                                     "; send the job spec as application/yaml or application/json");
  }
  if (request.body.find_first_not_of(" \t\r\n") == std::string::npos) {
    return problem_response(400, "the request body is empty; send a job spec in YAML or JSON");
  }
  std::string source = query_value(request, "source").value_or("");
  if (source.empty()) source = "request body";
  auto result = backend.submit_job(request.body, source);
  if (!result.ok()) {
    // The body arrived whole; whatever the spec parser rejects is content, hence 422.
    int status = result.error().kind == ErrorKind::invalid ? 422 : status_for(result.error().kind);
    return problem_response(status, result.error().message);
  }
  HttpResponse response = json_response(201, result.value());
  const nlohmann::json& created = result.value();
  if (created.is_object() && created.contains("id")) {
    const auto& id = created["id"];
    response.headers.emplace_back(
        "Location", "/api/v1/jobs/" + (id.is_string() ? id.get<std::string>() : id.dump()));
  }
  return response;
}

HttpResponse job_logs(ApiBackend& backend, const HttpRequest& request, std::int64_t id) {
  LogRequest log_request;
  if (auto attempt = query_value(request, "attempt"); attempt && !attempt->empty()) {
    auto value = parse_unsigned_digits<int>(*attempt);
    if (!value || *value < 1) {
      return problem_response(400, "attempt must be a positive integer, got " + shown(*attempt));
    }
    log_request.attempt_no = *value;
  }
  if (auto offset = query_value(request, "offset"); offset && !offset->empty()) {
    auto value = parse_unsigned_digits<std::uint64_t>(*offset);
    if (!value) {
      return problem_response(400, "offset must be a non-negative integer, got " + shown(*offset));
    }
    log_request.offset = *value;
  }
  auto result = backend.job_logs(id, log_request);
  if (!result.ok()) return error_response(result.error());
  HttpResponse response;
  response.status = 200;
  response.content_type = "text/plain; charset=utf-8";
  response.body = std::move(result.value());
  // The offset to ask for next time, so a follower never has to count bytes itself.
  response.headers.emplace_back("X-Next-Offset",
                                std::to_string(log_request.offset + response.body.size()));
  return response;
}

HttpResponse set_outage(ApiBackend& backend, const HttpRequest& request,
                        const std::string& cluster) {
  nlohmann::json body = nlohmann::json::parse(request.body, nullptr, false);
  if (body.is_discarded()) {
    return problem_response(400,
                            "the request body is not valid JSON; expected {\"down\": true} "
                            "or {\"down\": false}");
  }
  if (!body.is_object() || !body.contains("down") || !body["down"].is_boolean()) {
    return problem_response(422,
                            "expected a JSON object with a boolean \"down\", e.g. "
                            "{\"down\": true}");
  }
  return answer(backend.set_cluster_outage(cluster, body["down"].get<bool>()));
}

}  // namespace

Router make_api_router(ApiBackend& backend) {
  ApiBackend* b = &backend;
  Router router;
  router.add("GET", "/healthz", [](const HttpRequest&, const PathParams&) {
    return json_response(200, {{"status", "ok"}});
  });
  router.add("GET", "/api/v1/clusters",
             [b](const HttpRequest&, const PathParams&) { return answer(b->list_clusters()); });
  router.add("GET", "/api/v1/clusters/{name}/nodes",
             [b](const HttpRequest& request, const PathParams& params) {
               return cluster_nodes(*b, request, params.at("name"));
             });
  router.add("POST", "/api/v1/clusters/{name}/outage",
             [b](const HttpRequest& request, const PathParams& params) {
               return set_outage(*b, request, params.at("name"));
             });
  router.add("GET", "/api/v1/jobs",
             [b](const HttpRequest& request, const PathParams&) { return list_jobs(*b, request); });
  router.add("POST", "/api/v1/jobs", [b](const HttpRequest& request, const PathParams&) {
    return submit_job(*b, request);
  });
  router.add("GET", "/api/v1/jobs/{id}", with_job_id([b](const HttpRequest&, std::int64_t id) {
               return answer(b->get_job(id));
             }));
  router.add("GET", "/api/v1/jobs/{id}/attempts",
             with_job_id(
                 [b](const HttpRequest&, std::int64_t id) { return answer(b->job_attempts(id)); }));
  router.add(
      "GET", "/api/v1/jobs/{id}/events",
      with_job_id([b](const HttpRequest&, std::int64_t id) { return answer(b->job_events(id)); }));
  router.add(
      "GET", "/api/v1/jobs/{id}/explain",
      with_job_id([b](const HttpRequest&, std::int64_t id) { return answer(b->explain_job(id)); }));
  router.add("GET", "/api/v1/jobs/{id}/logs",
             with_job_id([b](const HttpRequest& request, std::int64_t id) {
               return job_logs(*b, request, id);
             }));
  router.add("POST", "/api/v1/jobs/{id}/cancel",
             with_job_id([b](const HttpRequest&, std::int64_t id) {
               return answer(b->cancel_job(id), 202);
             }));
  return router;
}

HttpResponse handle_api(ApiBackend& backend, const HttpRequest& request) {
  try {
    return make_api_router(backend).dispatch(request);
  } catch (const std::exception& e) {
    return problem_response(500, std::string("internal error: ") + e.what());
  } catch (...) {
    return problem_response(500, "internal error");
  }
}

}  // namespace orch
