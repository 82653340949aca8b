// The health routes (health_routes.h): parameters are checked here, the work is the backend's.
#include "web/health_routes.h"

#include <optional>
#include <string>

#include "scheduler/model/node_state.h"
#include "web/route_helpers.h"

namespace orch {
namespace {

using nlohmann::json;
using routes::answer;
using routes::query_value;
using routes::read_limit;
using routes::read_positive;
using routes::shown;
using routes::with_job_id;

constexpr int kDefaultProbes = 100;
constexpr int kDefaultWindowDays = 30;
constexpr int kMaxWindowDays = 3650;
constexpr std::size_t kMaxReason = 1000;

HttpResponse list_nodes(HealthApi& backend, const HttpRequest& request) {
  NodeFilter filter;
  if (auto cluster = query_value(request, "cluster"); cluster && !cluster->empty()) {
    filter.cluster = *cluster;
  }
  if (auto state = query_value(request, "state"); state && !state->empty()) {
    if (!parse_node_state(*state)) {
      return problem_response(400, "unknown node state " + shown(*state) +
                                       "; expected one of active, quarantined, retired");
    }
    filter.state = *state;
  }
  return answer(backend.list_nodes(filter));
}

// The optional body {"reason": "..."} of quarantine, release, drain, activate and retire; no
// body is no reason. A response when the body is wrong.
std::optional<HttpResponse> read_reason(const HttpRequest& request, std::string& reason) {
  if (request.body.find_first_not_of(" \t\r\n") == std::string::npos) return std::nullopt;
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded()) {
    return problem_response(400,
                            "the request body is not valid JSON; send no body or "
                            "{\"reason\": \"...\"}");
  }
  if (!body.is_object() || (body.contains("reason") && !body["reason"].is_string())) {
    return problem_response(422,
                            "expected a JSON object with an optional string \"reason\", e.g. "
                            "{\"reason\": \"Xid 79 twice\"}");
  }
  reason = body.value("reason", "");
  if (reason.size() > kMaxReason) {
    return problem_response(422, "reason is longer than " + std::to_string(kMaxReason) + " bytes");
  }
  return std::nullopt;
}

HttpResponse set_node_state(HealthApi& backend, const HttpRequest& request,
                            const PathParams& params, bool quarantine) {
  std::string reason;
  if (auto bad = read_reason(request, reason)) return *bad;
  return answer(backend.set_node_state(params.at("name"), params.at("node"), quarantine, reason));
}

HttpResponse set_cluster_admission(HealthApi& backend, const HttpRequest& request,
                                   const PathParams& params, const std::string& to) {
  std::string reason;
  if (auto bad = read_reason(request, reason)) return *bad;
  return answer(backend.set_cluster_admission(params.at("name"), to, reason));
}

// POST /api/v1/clusters/{name}/nodes/{node}/<verb>: the node quarantined or released.
RouteRow node_state_row(HealthApi* b, const std::string& verb, bool quarantine,
                        std::string summary) {
  return {.method = "POST",
          .path = "/api/v1/clusters/{name}/nodes/{node}/" + verb,
          .lane = Lane::command,
          .role = Role::admin,
          .tag = "nodes",
          .summary = std::move(summary),
          .body = Body::json_optional,
          .body_schema = "Reason",
          .answer_schema = "Node",
          .errors = {404},
          .handler = [b, quarantine](const HttpRequest& request, const PathParams& params) {
            return set_node_state(*b, request, params, quarantine);
          }};
}

// POST /api/v1/clusters/{name}/<verb>: the cluster's admission moves to `to`.
RouteRow admission_row(HealthApi* b, const std::string& verb, const std::string& to,
                       std::string summary) {
  return {.method = "POST",
          .path = "/api/v1/clusters/{name}/" + verb,
          .lane = Lane::command,
          .role = Role::admin,
          .tag = "clusters",
          .summary = std::move(summary),
          .body = Body::json_optional,
          .body_schema = "Reason",
          .answer_schema = "Cluster",
          .errors = {404, 409},
          .handler = [b, to](const HttpRequest& request, const PathParams& params) {
            return set_cluster_admission(*b, request, params, to);
          }};
}

HttpResponse cluster_probes(HealthApi& backend, const HttpRequest& request,
                            const std::string& cluster) {
  int limit = kDefaultProbes;
  if (auto bad = read_limit(request, limit)) return *bad;
  return answer(backend.cluster_probes(cluster, query_value(request, "node").value_or(""), limit));
}

HttpResponse provider_report(HealthApi& backend, const HttpRequest& request) {
  int days = kDefaultWindowDays;
  if (auto bad = read_positive(request, "window_days", kMaxWindowDays, days)) return *bad;
  return answer(backend.provider_report(days));
}

// ?by=job|team|cluster|vendor&since=2026-12-01: the backend checks both (400 naming the value).
HttpResponse cost_report(HealthApi& backend, const HttpRequest& request) {
  CostQuery query;
  if (auto by = query_value(request, "by")) query.by = *by;
  if (auto since = query_value(request, "since")) query.since = *since;
  auto answer_or = backend.cost_report(query);
  if (!answer_or && answer_or.error().kind == ErrorKind::invalid) {
    return problem_response(400, answer_or.error().message);
  }
  return answer(std::move(answer_or));
}

// ?points=N: the most points of the whole series, kMinSeriesPoints..kMaxSeriesPoints.
HttpResponse job_series(HealthApi& backend, const HttpRequest& request, std::int64_t id) {
  int points = kDefaultSeriesPoints;
  if (auto text = query_value(request, "points")) {
    auto parsed = routes::parse_unsigned_digits<int>(*text);
    if (!parsed || *parsed < kMinSeriesPoints || *parsed > kMaxSeriesPoints) {
      return problem_response(400, "points must be an integer from " +
                                       std::to_string(kMinSeriesPoints) + " to " +
                                       std::to_string(kMaxSeriesPoints) + ", got " + shown(*text));
    }
    points = *parsed;
  }
  return answer(backend.job_series(id, points));
}

}  // namespace

// function-length: table
RouteTable health_routes(HealthApi& backend) {
  HealthApi* b = &backend;
  return {{.method = "GET",
           .path = "/api/v1/nodes",
           .lane = Lane::read,
           .role = Role::viewer,
           .tag = "nodes",
           .summary = "Every node with its standing and counted failures",
           .query = {{"cluster", "string", "one cluster's"},
                     {"state", "string", "active, quarantined or retired"}},
           .answer_schema = "NodeList",
           .errors = {400, 404},
           .handler = [b](const HttpRequest& request,
                          const PathParams&) { return list_nodes(*b, request); }},
          node_state_row(b, "quarantine", true, "Take a node out of service"),
          node_state_row(b, "release", false, "Return a node to service"),
          admission_row(b, "drain", "draining",
                        "No new work; running jobs move at their next checkpoint"),
          admission_row(b, "activate", "active", "Back in service"),
          admission_row(b, "retire", "retired", "Out of service for good; its jobs move at once"),
          {.method = "POST",
           .path = "/api/v1/clusters",
           .lane = Lane::command,
           .role = Role::admin,
           .tag = "clusters",
           .summary = "Add clusters from a clusters document to the running server",
           .query = {{"source", "string", "names the document in errors"}},
           .body = Body::document,
           .body_schema = "ClustersDocument",
           .ok = 201,
           .answer_schema = "Object",
           .errors = {409, 415, 422},
           .handler =
               [b](const HttpRequest& request, const PathParams&) {
                 std::string source;
                 if (auto bad = routes::read_document(request, "a clusters document", source))
                   return *bad;
                 return routes::answer_body(b->add_clusters(request.body, source), 201);
               }},
          {.method = "POST",
           .path = "/api/v1/clusters/reload",
           .lane = Lane::command,
           .role = Role::admin,
           .tag = "clusters",
           .summary = "Read the clusters file again",
           .answer_schema = "Object",
           .errors = {422, 501},
           .handler =
               [b](const HttpRequest&, const PathParams&) {
                 return routes::answer_body(b->reload_clusters(), 200);
               }},
          {.method = "POST",
           .path = "/api/v1/clusters/{name}/check",
           .lane = Lane::provider,
           .role = Role::operator_,
           .tag = "clusters",
           .summary = "Run the cluster's preflight now: one line per check",
           .answer_schema = "ClusterCheck",
           .errors = {404},
           .handler =
               [b](const HttpRequest&, const PathParams& params) {
                 return answer(b->check_cluster(params.at("name")));
               }},
          {.method = "POST",
           .path = "/api/v1/clusters/{name}/burn-in",
           .lane = Lane::command,
           .role = Role::operator_,
           .tag = "nodes",
           .summary = "Start a probe round on every node",
           .ok = 202,
           .answer_schema = "Object",
           .errors = {404, 409},
           .handler =
               [b](const HttpRequest&, const PathParams& params) {
                 return answer(b->start_burn_in(params.at("name")), 202);
               }},
          {.method = "GET",
           .path = "/api/v1/clusters/{name}/probes",
           .lane = Lane::read,
           .role = Role::viewer,
           .tag = "nodes",
           .summary = "Probe results, newest first",
           .query = {{"node", "string", "one node's"}, {"limit", "integer", "1 to 1000"}},
           .answer_schema = "Object",
           .errors = {400, 404},
           .handler =
               [b](const HttpRequest& request, const PathParams& params) {
                 return cluster_probes(*b, request, params.at("name"));
               }},
          {.method = "GET",
           .path = "/api/v1/reports/providers",
           .lane = Lane::read,
           .role = Role::viewer,
           .tag = "reports",
           .summary = "Provider scorecards",
           .query = {{"window_days", "integer", "1 to 3650 (default 30)"}},
           .answer_schema = "ProviderReport",
           .errors = {400},
           .handler = [b](const HttpRequest& request,
                          const PathParams&) { return provider_report(*b, request); }},
          {.method = "GET",
           .path = "/api/v1/reports/cost",
           .lane = Lane::read,
           .role = Role::viewer,
           .tag = "reports",
           .summary = "What GPU-hours cost, useful and lost (by kind), by job, team, cluster or "
                      "vendor",
           .query = {{"by", "string", "job, team, cluster (default) or vendor"},
                     {"since", "string",
                      "a UTC date (2026-12-01) or month (2026-12); default: this month"}},
           .answer_schema = "CostReport",
           .errors = {400},
           .handler = [b](const HttpRequest& request,
                          const PathParams&) { return cost_report(*b, request); }},
          {.method = "GET",
           .path = "/api/v1/jobs/{id}/mfu",
           .lane = Lane::read,
           .role = Role::viewer,
           .tag = "jobs",
           .summary = "The job's MFU per attempt, a bucket a minute",
           .answer_schema = "Object",
           .errors = {400, 404},
           .handler = with_job_id(
               [b](const HttpRequest&, std::int64_t id) { return answer(b->job_mfu(id)); })},
          {.method = "GET",
           .path = "/api/v1/jobs/{id}/series",
           .lane = Lane::read,
           .role = Role::viewer,
           .tag = "jobs",
           .summary = "The run as a series: loss, tokens/s, step time and MFU per attempt, at "
                      "most `points` points in all, and the checkpoints",
           .query = {{"points", "integer", "10 to 10000 (default 2000): the most points in all"}},
           .answer_schema = "JobSeries",
           .errors = {400, 404},
           .handler = with_job_id([b](const HttpRequest& request, std::int64_t id) {
             return job_series(*b, request, id);
           })}};
}

}  // namespace orch
