#pragma once
// Placement plugins, in the manner of the Kubernetes scheduler framework and Nomad's stack:
// Filters say yes or no with a reason a person can read; Scores rank what passed, each in
// [0, 1], weighted by the pipeline. Plugins are pure functions of their inputs.

#include <optional>
#include <string>
#include <string_view>

#include "scheduler/model/site_health.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/job_spec.h"

namespace orch {

// One cluster as placement sees it.
struct ClusterView {
  const ClusterSpec* spec = nullptr;
  SiteHealth health = SiteHealth::healthy;
  int gpus_used = 0;  // by live attempts

  int gpus_free() const { return spec->total_gpus() - gpus_used; }
};

struct PlacementRequest {
  const JobSpec* job = nullptr;
  std::optional<std::string> previous_cluster;  // where the last attempt ran, when resuming
  std::optional<std::string> avoid_cluster;     // where the last attempt failed to launch
};

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
