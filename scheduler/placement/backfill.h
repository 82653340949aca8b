#pragma once
// Backfill (issue 18, docs/scheduling.md), decided without I/O, in the manner of EASY backfill
// (Slurm's sched/backfill, Maui). The first waiting job that fits nowhere for lack of free GPUs
// gets GPUs held on the cluster where it can start soonest: its start there is when enough live
// attempts will have ended by their jobs' time limits. A job placed after it may use that
// cluster only when its own time limit ends it before the held job starts, or when it fits in
// the GPUs the held job will not need then (spare). Other clusters stay open to every job, and
// a job of higher priority than the held one passes the hold.

#include <optional>
#include <string>
#include <vector>

#include "scheduler/model/held_gpus.h"
#include "scheduler/placement/pipeline.h"

namespace orch {

struct HoldPlan {
  std::string cluster;
  HeldGpus held;
};

// Where to hold GPUs for the job of `req` (req.job_id, req.job), which fits nowhere now: among
// the clusters where every filter passes once enough of their live attempts (`running`) have
// ended, the one where it starts soonest (a known start before an unknown one, then the
// clusters' order). nullopt when no cluster would take it even so (a filter other than free
// GPUs rejects it everywhere: that is not a wait backfill can shorten).
std::optional<HoldPlan> plan_hold(const PlacementPipeline& pipeline, const PlacementRequest& req,
                                  const std::vector<ClusterView>& clusters,
                                  const std::vector<AttemptEnd>& running);

// The `held` filter: a cluster that holds GPUs for another job of equal or higher priority takes
// this one only when it ends before that job starts, or fits in the spare GPUs.
class HeldGpusFilter final : public FilterPlugin {
 public:
  std::string_view name() const override { return "held"; }
  std::optional<std::string> reject(const PlacementRequest& req,
                                    const ClusterView& cluster) const override;
};

}  // namespace orch
