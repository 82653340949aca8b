#pragma once
// The job's Slurm shape (issue 40, item 5): a Slurm cluster whose slurm.job_options pin or
// forbid an option the job's `slurm:` sets is not a candidate, and neither is a cluster whose
// nodes cannot give each node's tasks cpus_per_task x tasks_per_node CPUs and the job's memory
// (where the site reports its nodes' CPUs and memory: Slurm's sinfo).

#include "scheduler/placement/plugin.h"

namespace orch {

class JobShapeFilter final : public FilterPlugin {
 public:
  std::string_view name() const override { return "job-shape"; }
  std::optional<std::string> reject(const PlacementRequest& req,
                                    const ClusterView& cluster) const override;
};

}  // namespace orch
