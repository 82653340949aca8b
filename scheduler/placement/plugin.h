#pragma once
// Placement plugins, in the manner of the Kubernetes scheduler framework and Nomad's stack:
// Filters say yes or no with a reason a person can read; Scores rank what passed, each in
// [0, 1] (or relative, see ScorePlugin::relative), weighted by the pipeline. Plugins are pure
// functions of their inputs.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/health/goodput.h"
#include "scheduler/model/held_gpus.h"
#include "scheduler/model/node_state.h"
#include "scheduler/model/score_breakdown.h"
#include "scheduler/model/site_health.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/job_spec.h"

namespace orch {

// One cluster as placement sees it.
struct ClusterView {
  const ClusterSpec* spec = nullptr;
  SiteHealth health = SiteHealth::healthy;
  int gpus_used = 0;                           // by live attempts
  std::vector<std::string> unhealthy_nodes;    // as the site's inventory last reported them
  std::vector<std::string> quarantined_nodes;  // quarantined or retired by orchestrate
  Admission admission = Admission::active;     // only active clusters get work
  // "cluster X misconfigured: ..." while its last preflight failed, or a launch there failed on
  // the server's own configuration since (scheduler/model/preflight.h); empty: none known.
  std::string misconfigured;
  ClusterHistory history;  // for the expected-goodput score
  // GPUs other tenants' jobs hold on usable nodes, as the site reports them: what its nodes'
  // busy GPUs add beyond gpus_used (0 where the site does not say, or says less than ours).
  int gpus_foreign = 0;
  // GPUs kept for a waiting job that fits nowhere yet (backfill.h): a job placed after it may
  // take only the spare ones, unless its time limit ends it before that job starts.
  std::optional<HeldGpus> held;
  // Hot spares (issue 38): the nodes of the cluster's live spares (their GPUs are in gpus_used:
  // held idle; no other launch lands on them), and those ready, which a job that lost a node on
  // this cluster may take (PlacementRequest::may_take_spares, spares_to_take).
  std::vector<std::string> spare_nodes;
  std::vector<std::string> ready_spares;
  // Each listed node's CPUs and memory in MiB as the site last reported them (0: not said),
  // for a job's cpus_per_task and memory (issue 40, JobShapeFilter). Empty: none reported.
  struct NodeSize {
    std::string name;
    int cpus = 0;
    std::int64_t memory_mb = 0;
  };
  std::vector<NodeSize> node_sizes;
  // What a GPU-hour costs there when placing decides (issue 45, fill_prices in
  // cost_objective.h): its own price then (price_at), or, for a cluster without a price in a
  // fleet with priced ones, the dearest priced cluster's (price_assumed); 0 in a fleet without
  // prices. The goodput_per_cost objective divides the goodput by it.
  double price_per_gpu_hour = 0;
  bool price_assumed = false;
};

// What placement maximises (issue 45, the clusters file's `placement.objective` or a team's
// `objective`): expected useful FLOP/s, or that per unit of money (cost_objective.h).
enum class PlacementObjective { goodput, goodput_per_cost };

struct PlacementRequest {
  const JobSpec* job = nullptr;
  std::optional<std::string> previous_cluster;  // where the last attempt ran, when resuming
  std::optional<std::string> avoid_cluster;     // where the last attempt failed to launch
  // Nodes of previous_cluster the last attempt failed on (node_lost), whatever the inventory
  // says yet: the next attempt there must not land on them.
  std::vector<std::string> avoid_nodes;
  // Seconds to copy the job's datasets to each cluster (absent or 0: they are there).
  std::map<std::string, double> staging_s;
  // Seconds to copy its newest checkpoint to each cluster (absent or 0: a verified copy is there,
  // or it has none): with staging_s, what moving there costs (move_worth.h).
  std::map<std::string, double> checkpoint_copy_s;
  // When the job's first attempt was placed (nullopt: it has none yet): how long it has run, for
  // the horizon a move is judged over.
  std::optional<Millis> run_started_ms;
  // Team quotas (team_quotas.h): GPUs the job's team may still start within its quota on each
  // cluster that bounds it (absent: no bound). With within_quota, a cluster where the job would
  // go beyond it is rejected; without, the job may borrow there.
  std::map<std::string, int> quota_room;
  bool within_quota = false;
  // Backfill (backfill.h): the job's id (0: not stored yet), when placing decides, and when an
  // attempt placed now ends at the latest (now + its time_limit; nullopt: it has none).
  std::int64_t job_id = 0;
  Millis now_ms = 0;
  std::optional<Millis> ends_ms;
  // The job's last attempt lost a node on previous_cluster: that cluster's ready hot spares
  // count as free for it (gpus_free), taken only as far as the free GPUs fall short.
  bool may_take_spares = false;
  // The objective of the job's team, else the fleet's (objective_of, cost_objective.h).
  PlacementObjective objective = PlacementObjective::goodput;
};

// Nodes of the cluster this request may not use: unhealthy ones, quarantined or retired ones,
// and the ones it avoids; sorted, each once.
std::vector<std::string> unusable_nodes(const PlacementRequest& req, const ClusterView& cluster);
// GPUs free for this request: whole usable nodes minus what live attempts, hot spares and other
// tenants use, plus the ready spares it may take.
int gpus_free(const PlacementRequest& req, const ClusterView& cluster);
// The ready spares of the cluster a job placed there takes: none unless it may take spares
// there, and only as many as the GPUs free without them fall short of the job's.
std::vector<std::string> spares_to_take(const PlacementRequest& req, const ClusterView& cluster);

class FilterPlugin {
 public:
  virtual ~FilterPlugin() = default;
  virtual std::string_view name() const = 0;
  // nullopt: the cluster passes. Otherwise why it cannot take the job.
  virtual std::optional<std::string> reject(const PlacementRequest& req,
                                            const ClusterView& cluster) const = 0;
};

class ScorePlugin {
 public:
  virtual ~ScorePlugin() = default;
  virtual std::string_view name() const = 0;
  // In [0, 1]; higher is better. A relative plugin returns any raw value >= 0 instead.
  virtual double score(const PlacementRequest& req, const ClusterView& cluster) const = 0;
  // Every cluster's raw score at once, for a score that compares clusters with each other (the
  // goodput score's exploration, move-worth); by default score() of each feasible cluster, 0 for
  // the others.
  virtual std::vector<double> score_all(const PlacementRequest& req,
                                        const std::vector<ClusterView>& clusters,
                                        const std::vector<bool>& feasible) const {
    std::vector<double> out(clusters.size(), 0.0);
    for (std::size_t i = 0; i < clusters.size(); ++i) {
      if (feasible[i]) out[i] = score(req, clusters[i]);
    }
    return out;
  }
  // A relative plugin's raw scores mean something only next to each other (expected FLOP/s):
  // the pipeline divides each by the highest raw score among the feasible clusters, so the
  // best one gets 1 (and all get 0 when the highest is 0).
  virtual bool relative() const { return false; }
  // What the score is made of, for the verdict's breakdown, as numbers: the text ("mfu 0.31,
  // ettr 0.93") is made only when a person reads it (score_breakdown.h). None for scores that
  // explain themselves.
  virtual ScoreNote note(const PlacementRequest&, const ClusterView&) const { return {}; }
  // The note as the verdict's breakdown shows it; empty for none.
  std::string explain(const PlacementRequest& req, const ClusterView& cluster) const {
    return note_text(note(req, cluster));
  }
};

}  // namespace orch
