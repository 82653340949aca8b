// Choosing the victims of a preemption (preemption.h).
#include "scheduler/placement/preemption.h"

#include <algorithm>
#include <tuple>

namespace orch {
namespace {

// Whether the job fits on `cluster` with these victims gone.
bool fits_without(const PlacementPipeline& pipeline, const PlacementRequest& req,
                  const ClusterView& cluster, const std::vector<PreemptionCandidate>& victims) {
  ClusterView emptier = cluster;
  PlacementRequest after = req;
  for (const auto& v : victims) {
    emptier.gpus_used -= v.gpus;
    // A victim of the job's own team gives its quota room back (fleet-wide and here alike).
    auto room = after.quota_room.find(cluster.spec->name);
    if (v.team == req.job->team && room != after.quota_room.end()) room->second += v.gpus;
  }
  return !pipeline.rejection(after, emptier);
}

std::optional<PreemptionPlan> plan_on(const PlacementPipeline& pipeline,
                                      const PlacementRequest& req, const ClusterView& cluster,
                                      std::vector<PreemptionCandidate> here) {
  std::sort(here.begin(), here.end(), [](const auto& a, const auto& b) {
    return std::tuple(!a.reclaim, a.steps_at_risk, a.priority, -a.gpus, a.attempt) <
           std::tuple(!b.reclaim, b.steps_at_risk, b.priority, -b.gpus, b.attempt);
  });
  std::vector<PreemptionCandidate> chosen;
  for (const auto& c : here) {
    if (fits_without(pipeline, req, cluster, chosen)) break;
    chosen.push_back(c);
  }
  if (!fits_without(pipeline, req, cluster, chosen)) return std::nullopt;
  // Give back what is not needed, the costliest first.
  for (std::size_t i = chosen.size(); i-- > 0;) {
    std::vector<PreemptionCandidate> fewer = chosen;
    fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(i));
    if (fits_without(pipeline, req, cluster, fewer)) chosen = std::move(fewer);
  }
  PreemptionPlan plan;
  plan.cluster = cluster.spec->name;
  for (const auto& v : chosen) {
    plan.steps_at_risk += v.steps_at_risk;
    if (!v.reclaim) ++plan.not_borrowed;
  }
  plan.victims = std::move(chosen);
  return plan;
}

}  // namespace

std::vector<PreemptionCandidate> preemptible_by(const JobSpec& job, const TeamLedger& ledger,
                                                bool reclaim,
                                                std::vector<PreemptionCandidate> candidates) {
  std::vector<PreemptionCandidate> out;
  for (auto& c : candidates) {
    const bool borrowed = ledger.enabled() && ledger.borrowed(c.attempt);
    c.reclaim = reclaim && borrowed && c.team != job.team;
    const bool lower =
        c.priority < job.priority && (!ledger.enabled() || c.team == job.team || borrowed);
    if (lower || c.reclaim) out.push_back(std::move(c));
  }
  return out;
}

std::optional<PreemptionPlan> plan_preemption(const PlacementPipeline& pipeline,
                                              const PlacementRequest& req, int priority,
                                              const std::vector<ClusterView>& clusters,
                                              const std::vector<PreemptionCandidate>& candidates) {
  std::optional<PreemptionPlan> best;
  for (const auto& cluster : clusters) {
    std::vector<PreemptionCandidate> here;
    for (const auto& c : candidates) {
      if (c.cluster == cluster.spec->name && (c.priority < priority || c.reclaim)) {
        here.push_back(c);
      }
    }
    if (here.empty()) continue;
    auto plan = plan_on(pipeline, req, cluster, std::move(here));
    if (!plan) continue;
    if (!best || std::tuple(plan->not_borrowed, plan->steps_at_risk, plan->victims.size()) <
                     std::tuple(best->not_borrowed, best->steps_at_risk, best->victims.size())) {
      best = std::move(plan);
    }
  }
  return best;
}

}  // namespace orch
