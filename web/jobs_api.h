#pragma once
// What the cluster and job routes (api_routes.cpp) need from the rest of the system: one part
// of ApiBackend (api_backend.h, which also says how an Error's kind becomes an HTTP status).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"
#include "scheduler/model/submitter.h"

namespace orch {

struct JobFilter {
  std::optional<std::string> state;    // a job state name
  std::optional<std::string> cluster;  // jobs whose latest attempt ran there
  std::optional<std::string> owner;    // jobs this user submitted
  std::optional<std::string> team;     // jobs of this team
  std::optional<std::string> group;    // jobs of this group (a sweep's name)
  int limit = 100;
  // Where a page starts: the "next" value of the previous page (jobs older than it); none for
  // the newest jobs.
  std::optional<std::int64_t> cursor;
};

// A JSON document already serialised (GET /jobs assembles its page from rows rendered once and
// cached). The routes send the text as it is.
struct JsonText {
  std::string text;
};

struct LogRequest {
  std::optional<int> attempt_no;  // default: the latest attempt
  std::uint64_t offset = 0;
  std::size_t max_bytes = 1 << 20;
};

class JobsApi {
 public:
  virtual ~JobsApi() = default;

  virtual Result<nlohmann::json> list_clusters() = 0;
  // One cluster's nodes as the site last reported them, and its node ledger newest first (at
  // most event_limit entries). not_found for a cluster that is not configured.
  virtual Result<nlohmann::json> cluster_nodes(const std::string& cluster, int event_limit) = 0;
  // {"jobs": [...], "next": "<cursor>" | null}
  virtual Result<JsonText> list_jobs(const JobFilter& filter) = 0;
  virtual Result<JsonText> get_job(std::int64_t id) = 0;
  virtual Result<nlohmann::json> job_attempts(std::int64_t id) = 0;
  virtual Result<nlohmann::json> job_events(std::int64_t id) = 0;
  virtual Result<nlohmann::json> explain_job(std::int64_t id) = 0;
  // body is a job spec in YAML (JSON is valid YAML); source names it in error messages.
  // who: the caller (the API token's user, recorded as the job's owner; the teams it may submit
  // for, and whether it may act for any: scheduler/spec/submission_rules.h).
  virtual Result<nlohmann::json> submit_job(const std::string& body, const std::string& source,
                                            const Submitter& who) = 0;
  // only_owner: when not empty, the job must be that user's (forbidden otherwise): a caller of
  // role user may cancel only the jobs they submitted.
  virtual Result<nlohmann::json> cancel_job(std::int64_t id, const std::string& only_owner) = 0;
  virtual Result<std::string> job_logs(std::int64_t id, const LogRequest& request) = 0;
  virtual Result<nlohmann::json> set_cluster_outage(const std::string& cluster, bool down) = 0;
};

}  // namespace orch
