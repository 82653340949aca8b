#pragma once
// Only clusters the job's code can be staged to (issue 40; scheduler/data/code_staging.h): a job
// with a `workdir:` needs a storage route from the server (local, Slurm, or Kubernetes with its
// storage root on one of its volumes: code_route_refusal), else it would wait in staging there
// forever.

#include <optional>
#include <string>

#include "scheduler/placement/plugin.h"

namespace orch {

class WorkdirFilter final : public FilterPlugin {
 public:
  std::string_view name() const override { return "workdir"; }
  std::optional<std::string> reject(const PlacementRequest& req,
                                    const ClusterView& cluster) const override;
};

// Why a job with code cannot run on `cluster`, or nullopt when it can (or has no code).
std::optional<std::string> workdir_refusal(const JobSpec& job, const ClusterSpec& cluster);

}  // namespace orch
