#pragma once
// What the health routes (health_routes.cpp, issue 4) need from the rest of the system: one part
// of ApiBackend (api_backend.h, which also says how an Error's kind becomes an HTTP status).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"
#include "web/jobs_api.h"

namespace orch {

struct NodeFilter {
  std::optional<std::string> cluster;  // a configured cluster (not_found otherwise)
  std::optional<std::string> state;    // a node state name: active, quarantined, retired
};

// A ticket to open with a cluster's provider.
struct TicketRequest {
  std::string cluster;
  std::string summary;
  std::vector<std::string> nodes;
  std::string incident;
};

// GET /api/v1/reports/cost (issue 45): by job, team, cluster or vendor, since a UTC date or
// month ("2026-12-01", "2026-12"; empty: the current month). The backend checks both.
struct CostQuery {
  std::string by = "cluster";
  std::string since;
};

// GET /api/v1/jobs/{id}/series?points=N: the most points of the whole answer (all attempts).
inline constexpr int kMinSeriesPoints = 10;
inline constexpr int kMaxSeriesPoints = 10000;
inline constexpr int kDefaultSeriesPoints = 2000;

class HealthApi {
 public:
  virtual ~HealthApi() = default;

  // Every node of every configured cluster with its standing, filtered.
  virtual Result<nlohmann::json> list_nodes(const NodeFilter& filter) = 0;
  // A person quarantines (quarantine true) or releases a node; the brain answers not_found with
  // the cluster's node names for an unknown node.
  virtual Result<nlohmann::json> set_node_state(const std::string& cluster, const std::string& node,
                                                bool quarantine, const std::string& reason) = 0;
  // A person drains, activates or retires a cluster: `to` is "draining", "active" or "retired"
  // (conflict when the cluster cannot go there: retired, or still burning in).
  virtual Result<nlohmann::json> set_cluster_admission(const std::string& cluster,
                                                       const std::string& to,
                                                       const std::string& reason) = 0;
  // Reads the clusters file again with the same validation (invalid naming where and why, and
  // nothing changes): clusters no longer in it drain; new ones join now. Unsupported when the
  // server was started without a file.
  virtual Result<nlohmann::json> reload_clusters() = 0;
  // Clusters that join the running server from a clusters document (the clusters file's
  // format; source names it in errors), validated as at start (invalid: nothing joins);
  // conflict when a name is taken. They are remembered across restarts.
  // {"added": [...], "message": "..."}.
  virtual Result<nlohmann::json> add_clusters(const std::string& document,
                                              const std::string& source) = 0;
  // Runs the cluster's preflight now, on its site, and hands the brain what it found (a failed
  // check keeps the cluster from jobs): {"cluster", "ok", "reason", "checks": [{"name", "ok",
  // "skipped", "why"}]}. not_found for a cluster that is not configured.
  virtual Result<nlohmann::json> check_cluster(const std::string& cluster) = 0;
  // Starts a burn-in round (conflict while one runs).
  virtual Result<nlohmann::json> start_burn_in(const std::string& cluster) = 0;
  // The cluster's probe results newest first; node empty: every node.
  virtual Result<nlohmann::json> cluster_probes(const std::string& cluster, const std::string& node,
                                                int limit) = 0;
  // The support record (ticket_routes.cpp): open a ticket (its JSON, with its id), list them
  // newest first (cluster empty: all; state "open", "closed" or "" for both), one with its
  // history, a note (the provider's answer when from_provider), and closing it.
  virtual Result<nlohmann::json> open_ticket(const TicketRequest& request) = 0;
  virtual Result<nlohmann::json> list_tickets(const std::string& cluster, const std::string& state,
                                              int limit) = 0;
  virtual Result<nlohmann::json> get_ticket(std::int64_t id) = 0;
  virtual Result<nlohmann::json> note_ticket(std::int64_t id, const std::string& text,
                                             bool from_provider) = 0;
  virtual Result<nlohmann::json> close_ticket(std::int64_t id, const std::string& resolution) = 0;
  // The provider scorecards over the last window_days days.
  virtual Result<nlohmann::json> provider_report(int window_days) = 0;
  // What GPU-hours cost, useful and lost, grouped as the query asks (docs/rest-api.md "Cost").
  virtual Result<nlohmann::json> cost_report(const CostQuery& query) = 0;
  // The job's MFU history per attempt, one bucket per minute.
  virtual Result<nlohmann::json> job_mfu(std::int64_t id) = 0;
  // The job's run as a series (docs/rest-api.md): per attempt its points (buckets of steps with
  // loss, its lowest and highest, tokens/s, step time, MFU), at most max_points in all
  // (kMinSeriesPoints..kMaxSeriesPoints, else invalid), and its checkpoints.
  virtual Result<JsonText> job_series(std::int64_t id, int max_points) = 0;
};

}  // namespace orch
