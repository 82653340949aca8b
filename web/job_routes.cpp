// The cluster and job routes of /api/v1 (job_routes.h): parameters and bodies are checked
// here, the work is the backend's (JobsApi).
#include "web/job_routes.h"

#include <cstdint>
#include <optional>
#include <string>

#include "scheduler/model/job_state.h"
#include "web/route_helpers.h"

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
  std::int64_t cursor = 0;
  if (auto bad = routes::read_cursor(request, cursor)) return *bad;
  if (cursor > 0) filter.cursor = cursor;
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

// ?workdir=sha256:<64 hex>: the archive `orchestrate job submit` uploaded for the spec's
// workdir (docs/rest-api.md "Code").
std::optional<HttpResponse> read_workdir(const HttpRequest& request, Submitter& who) {
  const auto value = query_value(request, "workdir");
  if (!value || value->empty()) return std::nullopt;
  const std::string hex = value->rfind("sha256:", 0) == 0 ? value->substr(7) : "";
  bool ok = hex.size() == 64;
  for (char c : hex) ok = ok && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (!ok) {
    return problem_response(400,
                            "workdir must be sha256: and an uploaded archive's 64 lowercase "
                            "hex digits, got " +
                                shown(*value));
  }
  who.workdir_sha256 = hex;
  return std::nullopt;
}

HttpResponse submit_job(JobsApi& backend, const HttpRequest& request) {
  std::string source;
  if (auto bad = read_document(request, "a job spec", source)) return *bad;
  Submitter who = submitter_of(request);
  if (auto bad = read_workdir(request, who)) return *bad;
  if (auto anyway = query_value(request, "queue_anyway"); anyway && !anyway->empty()) {
    if (*anyway != "true" && *anyway != "1" && *anyway != "false" && *anyway != "0") {
      return problem_response(400, "queue_anyway must be true or false, got " + shown(*anyway));
    }
    who.queue_anyway = *anyway == "true" || *anyway == "1";
  }
  auto result = backend.submit_job(request.body, source, who);
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

}  // namespace

// function-length: table
RouteTable job_routes(JobsApi& backend) {
  JobsApi* b = &backend;
  return {
      {.method = "GET",
       .path = "/api/v1/clusters",
       .lane = Lane::read,
       .role = Role::viewer,
       .tag = "clusters",
       .summary = "Clusters with health, admission, GPUs and nodes",
       .answer_schema = "ClusterList",
       .handler = [b](const HttpRequest&,
                      const PathParams&) { return answer(b->list_clusters()); }},
      {.method = "GET",
       .path = "/api/v1/clusters/{name}/nodes",
       .lane = Lane::read,
       .role = Role::viewer,
       .tag = "nodes",
       .summary = "A cluster's nodes and recent node events",
       .query = {{"limit", "integer", "events, 1 to 1000 (default 50)"}},
       .answer_schema = "ClusterNodes",
       .errors = {400, 404},
       .handler =
           [b](const HttpRequest& request, const PathParams& params) {
             return cluster_nodes(*b, request, params.at("name"));
           }},
      {.method = "POST",
       .path = "/api/v1/clusters/{name}/outage",
       .lane = Lane::provider,
       .role = Role::admin,
       .tag = "clusters",
       .summary = "Simulate an outage of a local site, or end it",
       .body = Body::json_required,
       .body_schema = "Outage",
       .answer_schema = "Object",
       .errors = {404, 501},
       .handler =
           [b](const HttpRequest& request, const PathParams& params) {
             return set_outage(*b, request, params.at("name"));
           }},
      {.method = "GET",
       .path = "/api/v1/jobs",
       .lane = Lane::read,
       .role = Role::viewer,
       .tag = "jobs",
       .summary = "Jobs, newest first, a page at a time",
       .query = {{"state", "string", "a job state"},
                 {"cluster", "string", "latest attempt's cluster"},
                 {"owner", "string", "submitted by"},
                 {"team", "string", "the spec's team"},
                 {"group", "string", "a sweep's name, or the spec's group"},
                 {"limit", "integer", "1 to 1000 (default 100)"},
                 {"cursor", "string", "the previous page's next"}},
       .answer_schema = "JobPage",
       .errors = {400},
       .handler = [b](const HttpRequest& request,
                      const PathParams&) { return list_jobs(*b, request); }},
      {.method = "POST",
       .path = "/api/v1/jobs",
       .lane = Lane::command,
       .role = Role::user,
       .tag = "jobs",
       .summary = "Submit a job spec",
       .query = {{"source", "string", "names the spec in errors"},
                 {"workdir", "string",
                  "sha256:<hex> of the archive uploaded for the spec's workdir: (PUT "
                  "/api/v1/code/{sha256})"},
                 {"queue_anyway", "boolean",
                  "keep a job no configured cluster could ever hold (422 without), waiting for a "
                  "cluster still to come"}},
       .body = Body::document,
       .body_schema = "JobSpec",
       .ok = 201,
       .answer_schema = "Submitted",
       .errors = {400, 413, 415, 422},
       .handler = [b](const HttpRequest& request,
                      const PathParams&) { return submit_job(*b, request); }},
      {.method = "GET",
       .path = "/api/v1/jobs/{id}",
       .lane = Lane::read,
       .role = Role::viewer,
       .tag = "jobs",
       .summary = "A job with its spec and checkpoint advice",
       .answer_schema = "JobDetail",
       .errors = {400, 404},
       .handler = with_job_id(
           [b](const HttpRequest&, std::int64_t id) { return answer(b->get_job(id)); })},
      {.method = "GET",
       .path = "/api/v1/jobs/{id}/attempts",
       .lane = Lane::read,
       .role = Role::viewer,
       .tag = "jobs",
       .summary = "A job's attempts",
       .answer_schema = "AttemptList",
       .errors = {400, 404},
       .handler = with_job_id(
           [b](const HttpRequest&, std::int64_t id) { return answer(b->job_attempts(id)); })},
      {.method = "GET",
       .path = "/api/v1/jobs/{id}/events",
       .lane = Lane::read,
       .role = Role::viewer,
       .tag = "jobs",
       .summary = "A job's events, oldest first",
       .answer_schema = "EventList",
       .errors = {400, 404},
       .handler = with_job_id(
           [b](const HttpRequest&, std::int64_t id) { return answer(b->job_events(id)); })},
      {.method = "GET",
       .path = "/api/v1/jobs/{id}/explain",
       .lane = Lane::read,
       .role = Role::viewer,
       .tag = "jobs",
       .summary = "Why the job was placed where it was, or why it waits",
       .answer_schema = "Explanation",
       .errors = {400, 404},
       .handler = with_job_id(
           [b](const HttpRequest&, std::int64_t id) { return answer(b->explain_job(id)); })},
      {.method = "GET",
       .path = "/api/v1/jobs/{id}/logs",
       .lane = Lane::provider,
       .role = Role::viewer,
       .tag = "jobs",
       .summary = "An attempt's log from a byte offset (X-Next-Offset says where to go on)",
       .query = {{"attempt", "integer", "default: the latest"}, {"offset", "integer", "default 0"}},
       .answer = Answer::text,
       .errors = {400, 404, 503},
       .handler = with_job_id(
           [b](const HttpRequest& request, std::int64_t id) { return job_logs(*b, request, id); })},
      {.method = "POST",
       .path = "/api/v1/jobs/{id}/cancel",
       .lane = Lane::command,
       .role = Role::user,
       .tag = "jobs",
       .summary = "Cancel a job (a user: only their own)",
       .body = Body::json_optional,
       .body_schema = "Object",
       .ok = 202,
       .answer_schema = "Object",
       .errors = {400, 404, 409},
       .handler = with_job_id([b](const HttpRequest& request, std::int64_t id) {
         // A user cancels their own jobs; an operator or admin any (the row's role is user).
         const bool own_only = request.caller_role == "user";
         return answer(b->cancel_job(id, own_only ? request.caller : ""), 202);
       })}};
}

}  // namespace orch
