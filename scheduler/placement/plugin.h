#pragma once
// Placement plugins, in the manner of the Kubernetes scheduler framework and Nomad's stack:
// Filters say yes or no with a reason a person can read; Scores rank what passed, each in
// [0, 1], weighted by the pipeline. Plugins are pure functions of their inputs.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/model/site_health.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/job_spec.h"

namespace orch {

// One cluster as placement sees it.
struct ClusterView {
  const ClusterSpec* spec = nullptr;
  SiteHealth health = SiteHealth::healthy;
  int gpus_used = 0;                         // by live attempts
  std::vector<std::string> unhealthy_nodes;  // as the site's inventory last reported them
};

struct PlacementRequest {
  const JobSpec* job = nullptr;
  std::optional<std::string> previous_cluster;  // where the last attempt ran, when resuming
  std::optional<std::string> avoid_cluster;     // where the last attempt failed to launch
  // Nodes of previous_cluster the last attempt failed on (node_lost), whatever the inventory
  // says yet: the next attempt there must not land on them.
  std::vector<std::string> avoid_nodes;
};

// Nodes of the cluster this request may not use: unhealthy ones, and the ones it avoids.
std::vector<std::string> unusable_nodes(const PlacementRequest& req, const ClusterView& cluster);
// GPUs free for this request: whole usable nodes minus what live attempts use.
int gpus_free(const PlacementRequest& req, const ClusterView& cluster);

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
  // In [0, 1]; higher is better.
  virtual double score(const PlacementRequest& req, const ClusterView& cluster) const = 0;
};

}  // namespace orch
