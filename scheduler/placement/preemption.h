#pragma once
// Checkpoint-aware preemption (issue 18, docs/scheduling.md), decided without I/O: when a job
// fits nowhere, which running attempts of lower priority to stop so that it fits, and where.
//
// On each cluster the job could use were it emptier (every filter passes once the victims'
// GPUs are free), victims are taken in the order that loses least: borrowed GPUs taken back for
// a team within its quota first (any priority), then fewest steps since their job's last
// checkpoint, then lowest priority, then the most GPUs; then any victim the job can do without
// is given back, the costliest first. The cluster that stops the fewest victims not borrowed
// wins, then the fewest steps lost in all, then fewer victims, then the clusters file's order.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/model/preemption_candidate.h"
#include "scheduler/placement/pipeline.h"
#include "scheduler/placement/team_quotas.h"

namespace orch {

struct PreemptionPlan {
  std::string cluster;
  std::vector<PreemptionCandidate> victims;  // in the order they were chosen
  std::int64_t steps_at_risk = 0;            // the victims' in all
  std::size_t not_borrowed = 0;              // victims not taken back as borrowed (reclaim)
};

// Which candidates a job may stop. Without quotas: those of lower priority. With quotas: those
// of lower priority of its own team or on borrowed GPUs, and, when `reclaim` (the job would run
// within its team's quota), any other team's borrowed ones, marked `reclaim`. With `refused`,
// each one left out and why ("priority 1000, not below the job's 1000"; another team's attempt
// within its quota: "team vision within its quota 4/4, protected").
std::vector<PreemptionCandidate> preemptible_by(const JobSpec& job, const TeamLedger& ledger,
                                                bool reclaim,
                                                std::vector<PreemptionCandidate> candidates,
                                                std::vector<PreemptionNote>* refused = nullptr);

// nullopt when no choice of candidates (of lower priority than `priority`, or marked reclaim)
// lets the job fit. With `notes` (issue 42), each candidate and what became of it: taken (on the
// chosen cluster), not needed (the job fits there without it), not enough (the job does not fit
// there even with every candidate gone: the filter that still refuses), not taken (another
// cluster loses less), or not of lower priority. The plan is the same with or without.
std::optional<PreemptionPlan> plan_preemption(const PlacementPipeline& pipeline,
                                              const PlacementRequest& req, int priority,
                                              const std::vector<ClusterView>& clusters,
                                              const std::vector<PreemptionCandidate>& candidates,
                                              std::vector<PreemptionNote>* notes = nullptr);

}  // namespace orch
