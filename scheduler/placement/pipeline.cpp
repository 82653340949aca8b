#include "scheduler/placement/pipeline.h"

#include <cstdio>

#include "scheduler/placement/filters.h"
#include "scheduler/placement/scores.h"

namespace orch {

std::string PlacementDecision::summary() const {
  std::string out;
  for (const auto& v : verdicts) {
    if (v.feasible) continue;
    if (!out.empty()) out += "; ";
    out += v.cluster + ": " + v.reason;
  }
  return out;
}

PlacementPipeline& PlacementPipeline::add_filter(std::unique_ptr<FilterPlugin> filter) {
  filters_.push_back(std::move(filter));
  return *this;
}

PlacementPipeline& PlacementPipeline::add_score(std::unique_ptr<ScorePlugin> score, double weight) {
  scores_.push_back({std::move(score), weight});
  return *this;
}

PlacementDecision PlacementPipeline::place(const PlacementRequest& req,
                                           const std::vector<ClusterView>& clusters) const {
  PlacementDecision d;
  const ClusterVerdict* best = nullptr;
  d.verdicts.reserve(clusters.size());
  for (const auto& c : clusters) {
    ClusterVerdict v;
    v.cluster = c.spec->name;
    v.feasible = true;
    for (const auto& f : filters_) {
      if (auto why = f->reject(req, c)) {
        v.feasible = false;
        v.reason = std::string(f->name()) + ": " + *why;
        break;
      }
    }
    if (v.feasible) {
      for (const auto& s : scores_) {
        double part = s.weight * s.plugin->score(req, c);
        v.score += part;
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s%s=%.3f", v.reason.empty() ? "" : " ",
                      std::string(s.plugin->name()).c_str(), part);
        v.reason += buf;
      }
    }
    d.verdicts.push_back(std::move(v));
  }
  // Highest score wins; ties go to the earlier cluster in the clusters file.
  for (const auto& v : d.verdicts) {
    if (v.feasible && (!best || v.score > best->score)) best = &v;
  }
  if (best) d.chosen = best->cluster;
  return d;
}

PlacementPipeline PlacementPipeline::standard() {
  PlacementPipeline p;
  p.add_filter(std::make_unique<AllowedClustersFilter>())
      .add_filter(std::make_unique<SiteHealthyFilter>())
      .add_filter(std::make_unique<CapacityFilter>())
      .add_score(std::make_unique<SameSiteScore>(), 4.0)
      .add_score(std::make_unique<AvoidFailedSiteScore>(), 4.0)
      .add_score(std::make_unique<PreferredClusterScore>(), 2.0)
      .add_score(std::make_unique<FreeCapacityScore>(), 1.0);
  return p;
}

}  // namespace orch
