// Choosing the victims of a preemption (preemption.h).
#include "scheduler/placement/preemption.h"

#include <algorithm>
#include <tuple>

namespace orch {
namespace {

// Why the job still does not fit on `cluster` with these victims gone; nullopt: it fits.
std::optional<std::string> refusal_without(const PlacementPipeline& pipeline,
                                           const PlacementRequest& req, const ClusterView& cluster,
                                           const std::vector<PreemptionCandidate>& victims) {
  ClusterView emptier = cluster;
  PlacementRequest after = req;
  for (const auto& v : victims) {
    emptier.gpus_used -= v.gpus;
    // A victim of the job's own team gives its quota room back (fleet-wide and here alike).
    auto room = after.quota_room.find(cluster.spec->name);
    if (v.team == req.job->team && room != after.quota_room.end()) room->second += v.gpus;
  }
  return pipeline.rejection(after, emptier);
}

// Whether the job fits on `cluster` with these victims gone.
bool fits_without(const PlacementPipeline& pipeline, const PlacementRequest& req,
                  const ClusterView& cluster, const std::vector<PreemptionCandidate>& victims) {
  return !refusal_without(pipeline, req, cluster, victims);
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

std::string steps_text(std::int64_t steps) {
  return std::to_string(steps) + " step(s) at risk";
}

// "priority 100, not below the job's 1000"
std::string not_below(const PreemptionCandidate& c, int priority) {
  return "priority " + std::to_string(c.priority) + ", not below the job's " +
         std::to_string(priority);
}

// What a cluster's plan (or its absence) says of each candidate there, once the best cluster is
// known.
void note_cluster(const std::vector<PreemptionCandidate>& here,
                  const std::optional<PreemptionPlan>& plan, const std::string& refusal,
                  const std::optional<PreemptionPlan>& best, int priority,
                  std::vector<PreemptionNote>& notes) {
  for (const auto& c : here) {
    PreemptionNote n{c, false, {}};
    const bool victim =
        plan && std::any_of(plan->victims.begin(), plan->victims.end(),
                            [&](const PreemptionCandidate& v) { return v.attempt == c.attempt; });
    if (!plan) {
      n.why = "not enough: with every attempt it may stop here gone, " + refusal;
    } else if (!victim) {
      n.why = "not needed: the job fits here without it";
    } else if (best && best->cluster == plan->cluster) {
      n.taken = true;
      n.why = c.reclaim ? "taken back: GPUs team " + c.team + " borrowed beyond its quota; " +
                              steps_text(c.steps_at_risk)
                        : "taken: priority " + std::to_string(c.priority) + " below the job's " +
                              std::to_string(priority) + "; " + steps_text(c.steps_at_risk) +
                              " since its last checkpoint";
    } else {
      n.why = "not taken: making room here stops " + std::to_string(plan->victims.size()) +
              " attempt(s), " + steps_text(plan->steps_at_risk) + "; " + best->cluster +
              " loses less (" + std::to_string(best->victims.size()) + ", " +
              steps_text(best->steps_at_risk) + ")";
    }
    notes.push_back(std::move(n));
  }
}

}  // namespace

std::vector<PreemptionCandidate> preemptible_by(const JobSpec& job, const TeamLedger& ledger,
                                                bool reclaim,
                                                std::vector<PreemptionCandidate> candidates,
                                                std::vector<PreemptionNote>* refused) {
  std::vector<PreemptionCandidate> out;
  for (auto& c : candidates) {
    const bool borrowed = ledger.enabled() && ledger.borrowed(c.attempt);
    c.reclaim = reclaim && borrowed && c.team != job.team;
    const bool lower =
        c.priority < job.priority && (!ledger.enabled() || c.team == job.team || borrowed);
    if (lower || c.reclaim) {
      out.push_back(std::move(c));
    } else if (refused) {
      // Of lower priority yet left alone: another team's attempt within its quota.
      std::string why = c.priority >= job.priority
                            ? not_below(c, job.priority)
                            : "team " + c.team + " within its quota " +
                                  ledger.use_of_quota(c.team, c.cluster) + ", protected";
      refused->push_back({std::move(c), false, std::move(why)});
    }
  }
  return out;
}

std::optional<PreemptionPlan> plan_preemption(const PlacementPipeline& pipeline,
                                              const PlacementRequest& req, int priority,
                                              const std::vector<ClusterView>& clusters,
                                              const std::vector<PreemptionCandidate>& candidates,
                                              std::vector<PreemptionNote>* notes) {
  struct Considered {
    std::vector<PreemptionCandidate> here;
    std::optional<PreemptionPlan> plan;
    std::string refusal;  // why the job does not fit even with all of `here` gone
  };
  std::vector<Considered> considered;
  std::optional<PreemptionPlan> best;
  for (const auto& cluster : clusters) {
    Considered k;
    for (const auto& c : candidates) {
      if (c.cluster != cluster.spec->name) continue;
      if (c.priority < priority || c.reclaim) {
        k.here.push_back(c);
      } else if (notes) {
        notes->push_back({c, false, not_below(c, priority)});
      }
    }
    if (k.here.empty()) continue;
    k.plan = plan_on(pipeline, req, cluster, k.here);
    if (!k.plan && notes) k.refusal = refusal_without(pipeline, req, cluster, k.here).value_or("");
    const auto& plan = k.plan;
    if (plan &&
        (!best || std::tuple(plan->not_borrowed, plan->steps_at_risk, plan->victims.size()) <
                      std::tuple(best->not_borrowed, best->steps_at_risk, best->victims.size()))) {
      best = plan;
    }
    if (notes) considered.push_back(std::move(k));
  }
  for (const auto& k : considered) note_cluster(k.here, k.plan, k.refusal, best, priority, *notes);
  return best;
}

}  // namespace orch
