#pragma once
// What GET /metrics asks of the backend: a snapshot of plain figures, each read at a cost that
// grows with what it returns (live jobs, clusters, nodes, active transfers), never with the
// history (totals come from running tallies). metrics_text.h turns it into Prometheus's format.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/common/result.h"

namespace orch {

struct MetricsSnapshot {
  using Counts = std::vector<std::pair<std::string, std::int64_t>>;  // label value -> count
  Counts jobs_by_state;
  Counts attempts_by_cause;  // ended attempts
  std::int64_t transfer_bytes_done = 0;

  struct Job {  // every job not yet finished
    std::int64_t id = 0;
    std::string name;
    std::string state;
    std::string cluster;  // "" before its first placement
    std::optional<double> step, ettr, mfu;
  };
  std::vector<Job> live_jobs;

  struct Cluster {
    std::string name;
    std::string health;  // healthy | unreachable | down
    std::string admission;
    int gpus_total = 0;
    int gpus_used = 0;                        // by orchestrate's attempts
    int gpus_foreign = 0;                     // by other tenants' jobs, as the site reports them
    std::int64_t pending_actions = 0;         // its outbox queue
    std::optional<double> last_answer_age_s;  // since its site last answered this server
  };
  std::vector<Cluster> clusters;

  struct NodeStanding {
    std::string cluster;
    std::string state;  // active | quarantined | retired
    std::int64_t count = 0;
  };
  std::vector<NodeStanding> nodes;

  struct Transfer {  // active ones
    std::int64_t id = 0;
    std::string from, to, state;
    std::int64_t bytes_done = 0;
    std::int64_t bytes_total = 0;
    double rate_bytes_per_s = 0;
  };
  std::vector<Transfer> transfers;

  // What GPU-hours cost (issue 45): the all-time tally with the live attempts added, by team
  // ("" for jobs without one), cluster and kind (useful, redone, restart, queued, failed).
  struct Cost {
    std::string team, cluster, kind;
    double gpu_hours = 0;
    double money = 0;  // in the fleet's currency
  };
  std::vector<Cost> costs;

  std::int64_t brain_queue = 0;
  struct Histogram {
    std::vector<double> bounds;             // seconds, ascending
    std::vector<std::uint64_t> cumulative;  // per bound, then +Inf
    double sum = 0;
    std::uint64_t count = 0;
  } event_seconds;

  // Requests the access guard refused, by status. Not the backend's: the metrics route fills it
  // from the guard's tally (web/refused_requests.h) when it was given one.
  Counts refused_requests;
};

class MetricsApi {
 public:
  virtual ~MetricsApi() = default;
  virtual Result<MetricsSnapshot> metrics() = 0;
};

}  // namespace orch
