// The checkpoint and data routes (data_routes.h): bodies and parameters are checked here, the
// work is the backend's.
#include "web/data_routes.h"

#include <optional>
#include <string>

#include "web/route_helpers.h"

namespace orch {
namespace {

using nlohmann::json;
using routes::answer;
using routes::answer_body;
using routes::parse_id;
using routes::query_value;
using routes::read_limit;
using routes::read_object;
using routes::read_string;
using routes::shown;
using routes::with_job_id;

constexpr std::size_t kMaxDatasetName = 64;  // as a job spec's datasets: list allows
constexpr std::size_t kMaxPath = 4096;
constexpr int kDefaultTransfers = 100;
constexpr int kDefaultThroughputMinutes = 60;
constexpr int kMaxThroughputMinutes = 7 * 24 * 60;  // the store keeps a week

std::optional<HttpResponse> check_dataset_name(const std::string& name) {
  if (valid_dataset_name(name)) return std::nullopt;
  return problem_response(422, "dataset name " + shown(name) +
                                   " is not valid: use 1 to 64 letters, digits, '-', '_' and "
                                   "'.' (not only dots)");
}

std::optional<HttpResponse> check_cluster_name(const std::string& cluster) {
  if (!cluster.empty()) return std::nullopt;
  return problem_response(422, "\"cluster\" must name a configured cluster; it is empty");
}

HttpResponse register_dataset(DataApi& backend, const HttpRequest& request) {
  const std::string example =
      R"({"name": "imagenet", "cluster": "alpha", "path": "/data/imagenet"})";
  json body;
  if (auto bad = read_object(request, false, example, body)) return *bad;
  std::string name, cluster, path;
  if (auto bad = read_string(body, "name", true, example, name)) return *bad;
  if (auto bad = read_string(body, "cluster", true, example, cluster)) return *bad;
  if (auto bad = read_string(body, "path", true, example, path)) return *bad;
  if (auto bad = check_dataset_name(name)) return *bad;
  if (auto bad = check_cluster_name(cluster)) return *bad;
  if (path.empty() || path[0] != '/') {
    return problem_response(422,
                            "\"path\" must be an absolute path on the cluster (starting "
                            "with '/'), got " +
                                shown(path));
  }
  if (path.size() > kMaxPath) {
    return problem_response(422, "\"path\" is longer than " + std::to_string(kMaxPath) + " bytes");
  }
  for (char c : path) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return problem_response(422, "\"path\" must not contain control characters");
    }
  }
  return answer_body(backend.register_dataset(name, cluster, path), 201);
}

HttpResponse replicate(DataApi& backend, const HttpRequest& request) {
  const std::string example =
      R"({"dataset": "imagenet", "to": "beta"} or {"job": 7, "to": "beta"})";
  json body;
  if (auto bad = read_object(request, false, example, body)) return *bad;
  ReplicateRequest r;
  if (auto bad = read_string(body, "dataset", false, example, r.dataset)) return *bad;
  if (auto bad = read_string(body, "to", true, example, r.to)) return *bad;
  const bool has_dataset = body.contains("dataset") && !body["dataset"].is_null();
  const bool has_job = body.contains("job") && !body["job"].is_null();
  if (has_dataset == has_job) {
    return problem_response(422, "give either \"dataset\" or \"job\", not " +
                                     std::string(has_job ? "both" : "neither") + ", e.g. " +
                                     example);
  }
  if (has_job) {
    const json& job = body["job"];
    if (!job.is_number_integer() || job.get<std::int64_t>() <= 0) {
      return problem_response(
          422, "\"job\" must be a positive integer job id, got " + shown(job.dump()));
    }
    r.job_id = job.get<std::int64_t>();
  } else if (auto bad = check_dataset_name(r.dataset)) {
    return *bad;
  }
  if (r.to.empty()) {
    return problem_response(422, "\"to\" must name a configured cluster; it is empty");
  }
  return answer_body(backend.replicate_data(r), 202);
}

HttpResponse list_transfers(DataApi& backend, const HttpRequest& request) {
  TransferFilter filter;
  filter.limit = kDefaultTransfers;
  if (auto all = query_value(request, "all"); all && !all->empty()) {
    if (*all == "true" || *all == "1") {
      filter.all = true;
    } else if (*all != "false" && *all != "0") {
      return problem_response(400, "all must be true or false, got " + shown(*all));
    }
  }
  if (auto bad = read_limit(request, filter.limit)) return *bad;
  if (auto bad = routes::read_cursor(request, filter.cursor)) return *bad;
  return answer(backend.list_transfers(filter));
}

HttpResponse transfer_throughput(DataApi& backend, const HttpRequest& request) {
  int minutes = kDefaultThroughputMinutes;
  if (auto bad = routes::read_positive(request, "minutes", kMaxThroughputMinutes, minutes)) {
    return *bad;
  }
  return answer(backend.transfer_throughput(minutes));
}

HttpResponse start_audit(DataApi& backend, const HttpRequest& request) {
  const std::string example = R"({"cluster": "alpha"} or no body for every cluster)";
  json body;
  if (auto bad = read_object(request, true, example, body)) return *bad;
  std::string cluster;
  if (auto bad = read_string(body, "cluster", false, example, cluster)) return *bad;
  return answer_body(backend.start_audit(cluster), 202);
}

}  // namespace

bool valid_dataset_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxDatasetName) return false;
  bool only_dots = true;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
    only_dots = only_dots && c == '.';
  }
  return !only_dots;
}

// function-length: table
RouteTable data_routes(DataApi& backend) {
  DataApi* b = &backend;
  return {{.method = "GET",
           .path = "/api/v1/jobs/{id}/checkpoints",
           .lane = Lane::read,
           .role = Role::viewer,
           .tag = "data",
           .summary = "A job's checkpoints and their copies",
           .answer_schema = "Object",
           .errors = {400, 404},
           .handler = with_job_id([b](const HttpRequest&, std::int64_t id) {
             return answer(b->job_checkpoints(id));
           })},
          {.method = "GET",
           .path = "/api/v1/data/datasets",
           .lane = Lane::read,
           .role = Role::viewer,
           .tag = "data",
           .summary = "Datasets and their copies",
           .answer_schema = "DatasetList",
           .handler = [b](const HttpRequest&,
                          const PathParams&) { return answer(b->list_datasets()); }},
          {.method = "POST",
           .path = "/api/v1/data/datasets",
           .lane = Lane::command,
           .role = Role::operator_,
           .tag = "data",
           .summary = "Register a dataset whose first copy is at a cluster",
           .body = Body::json_required,
           .body_schema = "DatasetRequest",
           .ok = 201,
           .answer_schema = "Object",
           .errors = {409, 422},
           .handler = [b](const HttpRequest& request,
                          const PathParams&) { return register_dataset(*b, request); }},
          {.method = "POST",
           .path = "/api/v1/data/replicate",
           .lane = Lane::command,
           .role = Role::operator_,
           .tag = "data",
           .summary = "Copy a dataset or a job's newest checkpoint to a cluster",
           .body = Body::json_required,
           .body_schema = "ReplicateRequest",
           .ok = 202,
           .answer_schema = "Object",
           .errors = {404, 409, 422},
           .handler = [b](const HttpRequest& request,
                          const PathParams&) { return replicate(*b, request); }},
          {.method = "GET",
           .path = "/api/v1/data/transfers",
           .lane = Lane::read,
           .role = Role::viewer,
           .tag = "data",
           .summary = "A page of transfers, newest first, grouped by purpose and job",
           .query = {{"all", "boolean", "done and cancelled ones too (default: active and failed)"},
                     {"limit", "integer", "1 to 1000"},
                     {"cursor", "string", "the previous page's next"}},
           .answer_schema = "TransferList",
           .errors = {400},
           .handler = [b](const HttpRequest& request,
                          const PathParams&) { return list_transfers(*b, request); }},
          {.method = "GET",
           .path = "/api/v1/data/throughput",
           .lane = Lane::read,
           .role = Role::viewer,
           .tag = "data",
           .summary = "Bytes copied by all transfers per minute",
           .query = {{"minutes", "integer", "1 to 10080 (default 60)"}},
           .answer_schema = "TransferThroughput",
           .errors = {400},
           .handler = [b](const HttpRequest& request,
                          const PathParams&) { return transfer_throughput(*b, request); }},
          {.method = "GET",
           .path = "/api/v1/data/transfers/{id}",
           .lane = Lane::read,
           .role = Role::viewer,
           .tag = "data",
           .summary = "A transfer",
           .answer_schema = "Transfer",
           .errors = {400, 404},
           .handler =
               [b](const HttpRequest&, const PathParams& params) {
                 auto id = parse_id(params.at("id"), "transfer id");
                 if (!id.ok()) return error_response(id.error());
                 return answer(b->get_transfer(id.value()));
               }},
          {.method = "POST",
           .path = "/api/v1/data/audit",
           .lane = Lane::command,
           .role = Role::operator_,
           .tag = "data",
           .summary = "Check every copy (or one cluster's) now",
           .body = Body::json_optional,
           .body_schema = "AuditRequest",
           .ok = 202,
           .answer_schema = "Object",
           .errors = {404, 422},
           .handler = [b](const HttpRequest& request, const PathParams&) {
             return start_audit(*b, request);
           }}};
}

}  // namespace orch
