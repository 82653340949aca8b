#pragma once
// What the REST routes need from the rest of the system. The composition root (cli/) supplies
// the real backend (store reads + brain commands); web tests supply a fake. Keeping this seam
// means web/ never includes the store or the brain, and the brain never sees HTTP.
//
// Every method returns JSON ready to send or an Error whose kind picks the HTTP status:
// invalid -> 400 (422 for a well-formed body with bad content), not_found -> 404,
// conflict -> 409, unreachable/unsupported -> 503/501, others -> 500.

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"

namespace orch {

struct JobFilter {
  std::optional<std::string> state;    // a job state name
  std::optional<std::string> cluster;  // jobs whose latest attempt ran there
  int limit = 100;
  // Where a page starts: the "next" value of the previous page (jobs older than it); none for
  // the newest jobs.
  std::optional<std::int64_t> cursor;
};

struct NodeFilter {
  std::optional<std::string> cluster;  // a configured cluster (not_found otherwise)
  std::optional<std::string> state;    // a node state name: active, quarantined, retired
};

// GET /data/transfers: the newest first; all false keeps active ones (queued, running,
// verifying).
struct TransferFilter {
  bool all = false;
  int limit = 100;
};

// POST /data/replicate: a dataset, or a job's newest verified checkpoint, to a cluster.
struct ReplicateRequest {
  std::string dataset;      // either this ...
  std::int64_t job_id = 0;  // ... or this (0: none)
  std::string to;
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

class ApiBackend {
 public:
  virtual ~ApiBackend() = default;

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
  virtual Result<nlohmann::json> submit_job(const std::string& body, const std::string& source) = 0;
  virtual Result<nlohmann::json> cancel_job(std::int64_t id) = 0;
  virtual Result<std::string> job_logs(std::int64_t id, const LogRequest& request) = 0;
  virtual Result<nlohmann::json> set_cluster_outage(const std::string& cluster, bool down) = 0;

  // Health (issue 4). Every node of every configured cluster with its standing, filtered.
  virtual Result<nlohmann::json> list_nodes(const NodeFilter& filter) = 0;
  // A person quarantines (quarantine true) or releases a node; the brain answers not_found with
  // the cluster's node names for an unknown node.
  virtual Result<nlohmann::json> set_node_state(const std::string& cluster, const std::string& node,
                                                bool quarantine, const std::string& reason) = 0;
  // Starts a burn-in round (conflict while one runs).
  virtual Result<nlohmann::json> start_burn_in(const std::string& cluster) = 0;
  // The cluster's probe results newest first; node empty: every node.
  virtual Result<nlohmann::json> cluster_probes(const std::string& cluster, const std::string& node,
                                                int limit) = 0;
  // The provider scorecards over the last window_days days.
  virtual Result<nlohmann::json> provider_report(int window_days) = 0;
  // The job's MFU history per attempt, one bucket per minute.
  virtual Result<nlohmann::json> job_mfu(std::int64_t id) = 0;

  // Checkpoints and data (issue 5). A job's checkpoints newest first, each with its copies.
  virtual Result<nlohmann::json> job_checkpoints(std::int64_t id) = 0;
  // Every dataset with its copies.
  virtual Result<nlohmann::json> list_datasets() = 0;
  // Registers a dataset whose first copy is at cluster:path (invalid for a cluster that is not
  // configured, conflict for a name taken).
  virtual Result<nlohmann::json> register_dataset(const std::string& name,
                                                  const std::string& cluster,
                                                  const std::string& path) = 0;
  // Starts (or finds) the transfer that puts a copy at request.to.
  virtual Result<nlohmann::json> replicate_data(const ReplicateRequest& request) = 0;
  virtual Result<nlohmann::json> list_transfers(const TransferFilter& filter) = 0;
  virtual Result<nlohmann::json> get_transfer(std::int64_t id) = 0;
  // Checks every copy at cluster now (empty: at every cluster).
  virtual Result<nlohmann::json> start_audit(const std::string& cluster) = 0;
};

}  // namespace orch
