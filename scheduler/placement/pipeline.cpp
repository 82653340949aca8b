// Runs the filters and scores over every cluster and picks the best (pipeline.h).
#include "scheduler/placement/pipeline.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "scheduler/placement/backfill.h"
#include "scheduler/placement/container_filter.h"
#include "scheduler/placement/filters.h"
#include "scheduler/placement/goodput_score.h"
#include "scheduler/placement/job_shape_filter.h"
#include "scheduler/placement/move_worth_score.h"
#include "scheduler/placement/scores.h"
#include "scheduler/placement/workdir_filter.h"

namespace orch {

std::string PlacementDecision::summary() const {
  constexpr std::size_t kNamesShown = 5;
  struct Group {
    const std::string* reason;
    std::vector<const std::string*> clusters;
  };
  std::vector<Group> groups;
  std::unordered_map<std::string_view, std::size_t> group_of;
  for (const auto& v : verdicts) {
    if (v.feasible) continue;
    auto [it, added] = group_of.try_emplace(v.reason, groups.size());
    if (added) groups.push_back({&v.reason, {}});
    groups[it->second].clusters.push_back(&v.cluster);
  }
  std::string out;
  for (const auto& g : groups) {
    if (!out.empty()) out += "; ";
    for (std::size_t i = 0; i < g.clusters.size() && i < kNamesShown; ++i) {
      if (i) out += ", ";
      out += *g.clusters[i];
    }
    if (g.clusters.size() > kNamesShown) {
      out += " and " + std::to_string(g.clusters.size() - kNamesShown) + " more";
    }
    out += ": ";
    out += *g.reason;
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
  d.verdicts.reserve(clusters.size());
  for (const auto& c : clusters) {
    ClusterVerdict v;
    v.cluster = c.spec->name;
    v.refused_by = rejections(req, c);
    v.feasible = v.refused_by.empty();
    if (!v.feasible) v.reason = v.refused_by.front();
    d.verdicts.push_back(std::move(v));
  }

  // Raw scores of every feasible cluster first: a relative plugin's are divided by their
  // highest among the feasible clusters, so the best cluster gets 1.
  std::vector<bool> feasible(clusters.size());
  for (std::size_t i = 0; i < clusters.size(); ++i) feasible[i] = d.verdicts[i].feasible;
  std::vector<std::vector<double>> raw(scores_.size());
  for (std::size_t s = 0; s < scores_.size(); ++s) {
    raw[s] = scores_[s].plugin->score_all(req, clusters, feasible);
    double best_raw = 0;
    for (std::size_t i = 0; i < clusters.size(); ++i) {
      if (feasible[i]) best_raw = std::max(best_raw, raw[s][i]);
    }
    if (!scores_[s].plugin->relative()) continue;
    for (double& r : raw[s]) r = best_raw > 0 ? std::max(r, 0.0) / best_raw : 0.0;
  }

  // The breakdown, as numbers: the text ("goodput=4.920 (mfu 0.31, ...) move-worth=0.000 ...")
  // is made only when a verdict is read, since most are never read.
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    ClusterVerdict& v = d.verdicts[i];
    if (!v.feasible) continue;
    v.parts.reserve(scores_.size());
    for (std::size_t s = 0; s < scores_.size(); ++s) {
      const auto& plugin = *scores_[s].plugin;
      const double part = scores_[s].weight * raw[s][i];
      v.score += part;
      v.parts.push_back({plugin.name(), part, plugin.note(req, clusters[i])});
    }
  }

  // Highest score wins; ties go to the earlier cluster in the clusters file.
  const ClusterVerdict* best = nullptr;
  for (const auto& v : d.verdicts) {
    if (v.feasible && (!best || v.score > best->score)) best = &v;
  }
  if (best) d.chosen = best->cluster;
  return d;
}

namespace {

// "name: why" in one allocation: every undelivered or full cluster of every decision.
std::string named_reason(std::string_view name, const std::string& why) {
  std::string out;
  out.reserve(name.size() + 2 + why.size());
  out += name;
  out += ": ";
  out += why;
  return out;
}

}  // namespace

std::optional<std::string> PlacementPipeline::rejection(const PlacementRequest& req,
                                                        const ClusterView& cluster) const {
  for (const auto& f : filters_) {
    if (auto why = f->reject(req, cluster)) return named_reason(f->name(), *why);
  }
  return std::nullopt;
}

std::vector<std::string> PlacementPipeline::rejections(const PlacementRequest& req,
                                                       const ClusterView& cluster) const {
  // Every filter, not only the first that refuses: a person reading why a job waits wants all
  // that stands in its way ("site is down" and "only 2 of 4 GPUs free"). The cost is the
  // filters over the clusters, as for a feasible cluster.
  std::vector<std::string> out;
  for (const auto& f : filters_) {
    if (auto why = f->reject(req, cluster)) out.push_back(named_reason(f->name(), *why));
  }
  return out;
}

PlacementPipeline PlacementPipeline::standard() {
  PlacementPipeline p;
  p.add_filter(std::make_unique<AllowedClustersFilter>())
      .add_filter(std::make_unique<SiteHealthyFilter>())
      .add_filter(std::make_unique<AdmissionFilter>())
      .add_filter(std::make_unique<ContainerFilter>())
      .add_filter(std::make_unique<WorkdirFilter>())
      .add_filter(std::make_unique<PreflightFilter>())
      .add_filter(std::make_unique<JobShapeFilter>())
      .add_filter(std::make_unique<CapacityFilter>())
      .add_filter(std::make_unique<QuotaFilter>())
      .add_filter(std::make_unique<HeldGpusFilter>())
      .add_score(std::make_unique<GoodputScore>(), 6.0)
      .add_score(std::make_unique<MoveWorthScore>(), 1.5)
      .add_score(std::make_unique<AvoidFailedSiteScore>(), 4.0)
      .add_score(std::make_unique<PreferredClusterScore>(), 2.0)
      .add_score(std::make_unique<FreeCapacityScore>(), 1.0);
  return p;
}

}  // namespace orch
