#include "web/api_routes.h"

#include <cstdint>
#include <exception>
#include <optional>

#include "scheduler/model/job_state.h"
#include "web/data_routes.h"
#include "web/health_routes.h"
#include "web/metrics_routes.h"
#include "web/route_helpers.h"
#include "web/secret_routes.h"
#include "web/ticket_routes.h"

namespace orch {
namespace {

using routes::answer;
using routes::parse_unsigned_digits;
using routes::query_value;
using routes::read_document;
using routes::read_limit;
using routes::shown;
using routes::with_job_id;

constexpr int kDefaultNodeEvents = 50;

HttpResponse cluster_nodes(JobsApi& backend, const HttpRequest& request,
                           const std::string& cluster) {
  int limit = kDefaultNodeEvents;
  if (auto bad = read_limit(request, limit)) return *bad;
  return answer(backend.cluster_nodes(cluster, limit));
}

HttpResponse list_jobs(JobsApi& backend, const HttpRequest& request) {
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
  if (auto owner = query_value(request, "owner"); owner && !owner->empty()) filter.owner = *owner;
  if (auto team = query_value(request, "team"); team && !team->empty()) filter.team = *team;
  if (auto group = query_value(request, "group"); group && !group->empty()) filter.group = *group;
  if (auto bad = read_limit(request, filter.limit)) return *bad;
  if (auto cursor = query_value(request, "cursor"); cursor && !cursor->empty()) {
    auto id = parse_unsigned_digits<std::int64_t>(*cursor);
    if (!id || *id < 1) {
      return problem_response(
          400, "cursor must be the \"next\" value of a previous page, got " + shown(*cursor));
    }
    filter.cursor = *id;
  }
  return answer(backend.list_jobs(filter));
}

// The caller as a submitter: a `user` acts only for its token's teams; operators and admins (and
// a request that reached the router without the guard, in tests) for any.
Submitter submitter_of(const HttpRequest& request) {
  Submitter who;
  who.user = request.caller;
  who.any_team = request.caller_role != "user" && request.caller_role != "viewer";
  who.teams = request.caller_teams;
  return who;
}

HttpResponse submit_job(JobsApi& backend, const HttpRequest& request) {
  std::string source;
  if (auto bad = read_document(request, "a job spec", source)) return *bad;
  auto result = backend.submit_job(request.body, source, submitter_of(request));
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

HttpResponse job_logs(JobsApi& backend, const HttpRequest& request, std::int64_t id) {
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

HttpResponse set_outage(JobsApi& backend, const HttpRequest& request, const std::string& cluster) {
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

// The cluster and job routes, bound to backend (which must outlive router).
void add_job_routes(Router& router, JobsApi& backend) {
  JobsApi* b = &backend;
  router.add("GET", "/api/v1/clusters",
             [b](const HttpRequest&, const PathParams&) { return answer(b->list_clusters()); });
  router.add("GET", "/api/v1/clusters/{name}/nodes",
             [b](const HttpRequest& request, const PathParams& params) {
               return cluster_nodes(*b, request, params.at("name"));
             });
  router.add(
      "POST", "/api/v1/clusters/{name}/outage",
      [b](const HttpRequest& request, const PathParams& params) {
        return set_outage(*b, request, params.at("name"));
      },
      Lane::provider);
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
             }),
             Lane::provider);
  router.add("POST", "/api/v1/jobs/{id}/cancel",
             with_job_id([b](const HttpRequest& request, std::int64_t id) {
               // A user cancels their own jobs; an operator or admin any (route_roles.cpp).
               const bool own_only = request.caller_role == "user";
               return answer(b->cancel_job(id, own_only ? request.caller : ""), 202);
             }));
}

}  // namespace

Router make_api_router(ApiBackend& backend, const RefusedRequests* refused) {
  Router router;
  router.add(
      "GET", "/healthz",
      [](const HttpRequest&, const PathParams&) {
        return json_response(200, nlohmann::json{{"status", "ok"}});
      },
      Lane::probe);
  add_job_routes(router, backend);
  add_health_routes(router, backend);
  add_ticket_routes(router, backend);
  add_data_routes(router, backend);
  add_secret_routes(router, backend);
  add_metrics_route(router, backend, refused);
  return router;
}

std::vector<LaneOptions> api_lanes() {
  std::vector<LaneOptions> lanes(kLaneCount);
  auto set = [&lanes](Lane lane, int threads, std::size_t max_waiting) {
    lanes[static_cast<std::size_t>(lane)] = {to_string(lane), threads, max_waiting};
  };
  // Sized for what each kind waits on: reads on the database (as many as can usefully run at
  // once), commands on the single brain thread (more threads would only queue there), provider
  // calls on remote sites, one at a time per few sites.
  set(Lane::probe, 1, 256);
  set(Lane::read, 8, 4096);
  set(Lane::command, 4, 4096);
  set(Lane::provider, 4, 256);
  return lanes;
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
