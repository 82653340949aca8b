// Holds and the `held` filter (backfill.h).
#include "scheduler/placement/backfill.h"

#include <algorithm>
#include <tuple>

namespace orch {
namespace {

// Ends in the order they come: known ends first, earliest first; unknown ones last.
bool ends_before(const AttemptEnd* a, const AttemptEnd* b) {
  if (a->ends_ms.has_value() != b->ends_ms.has_value()) return a->ends_ms.has_value();
  return a->ends_ms.value_or(0) < b->ends_ms.value_or(0);
}

// The hold on one cluster, or nullopt when the job would not fit there even once its attempts
// have ended.
std::optional<HeldGpus> hold_on(const PlacementPipeline& pipeline, const PlacementRequest& req,
                                const ClusterView& cluster,
                                const std::vector<AttemptEnd>& running) {
  std::vector<const AttemptEnd*> here;
  for (const auto& r : running) {
    if (r.cluster == cluster.spec->name) here.push_back(&r);
  }
  std::sort(here.begin(), here.end(), ends_before);
  const int need = req.job->total_gpus();
  const int free_now = gpus_free(req, cluster);
  int available = free_now;
  int released = 0;
  bool known = true;
  Millis starts = req.now_ms;
  for (const AttemptEnd* r : here) {
    if (available >= need) break;
    available += r->gpus;
    released += r->gpus;
    if (!r->ends_ms) {
      known = false;
    } else {
      starts = std::max(starts, *r->ends_ms);
    }
  }
  if (available < need) return std::nullopt;
  // Every filter must pass once those attempts are gone (shape, health, admission, quota ...),
  // and the job's own hold is no obstacle to it.
  ClusterView emptier = cluster;
  emptier.gpus_used = std::max(0, cluster.gpus_used - released);
  emptier.held.reset();
  if (pipeline.rejection(req, emptier)) return std::nullopt;
  HeldGpus h;
  h.job = req.job_id;
  h.priority = req.job->priority;
  h.gpus = need;
  if (known) {
    h.starts_ms = starts;
    // Attempts that end by the same moment free their GPUs for it too.
    int at_start = free_now;
    for (const AttemptEnd* r : here) {
      if (r->ends_ms && *r->ends_ms <= starts) at_start += r->gpus;
    }
    h.spare_gpus = std::max(0, at_start - need);
  }
  return h;
}

}  // namespace

std::optional<HoldPlan> plan_hold(const PlacementPipeline& pipeline, const PlacementRequest& req,
                                  const std::vector<ClusterView>& clusters,
                                  const std::vector<AttemptEnd>& running) {
  std::optional<HoldPlan> best;
  // (unknown start, start): smaller is sooner; the clusters' order breaks ties.
  auto soonness = [](const HeldGpus& h) {
    return std::make_tuple(!h.starts_ms.has_value(), h.starts_ms.value_or(0));
  };
  for (const auto& c : clusters) {
    auto h = hold_on(pipeline, req, c, running);
    if (!h) continue;
    if (!best || soonness(*h) < soonness(best->held)) best = HoldPlan{c.spec->name, *h};
  }
  return best;
}

std::optional<std::string> HeldGpusFilter::reject(const PlacementRequest& req,
                                                  const ClusterView& cluster) const {
  if (!cluster.held) return std::nullopt;
  const HeldGpus& h = *cluster.held;
  if (req.job_id != 0 && req.job_id == h.job) return std::nullopt;
  if (req.job->priority > h.priority) return std::nullopt;
  if (h.starts_ms && req.ends_ms && *req.ends_ms <= *h.starts_ms) return std::nullopt;
  const int need = req.job->total_gpus();
  if (need <= h.spare_gpus) return std::nullopt;
  std::string msg = "GPUs held for job " + std::to_string(h.job) + " (" + std::to_string(h.gpus) +
                    " GPU(s)), which ";
  if (h.starts_ms) {
    const Millis in_ms = std::max<Millis>(0, *h.starts_ms - req.now_ms);
    msg += "starts here in " + std::to_string((in_ms + 999) / 1000) + " s at the latest; " +
           std::to_string(h.spare_gpus) + " spare";
    msg += req.job->time_limit_s ? ": this job's time_limit ends after that"
                                 : ": a job whose time_limit ends by then may use them";
  } else {
    msg += "starts here when attempts without a time limit end; none spare";
  }
  return msg;
}

}  // namespace orch
