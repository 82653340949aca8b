#include "scheduler/brain/cluster_history.h"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

namespace orch {
namespace {

std::optional<double> median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

// The attempts of the window and the node failures in it (one per incident).
Result<void> gather_attempt_facts(StoreReader& store, const std::vector<ClusterSpec>& clusters,
                                  Millis window_start, ScorecardInputs& in) {
  auto attempts = store.attempt_summaries_since(window_start);
  if (!attempts) return attempts.error();
  for (const auto& a : *attempts) {
    if (!find_cluster(clusters, a.cluster)) continue;
    AttemptFact f;
    f.cluster = a.cluster;
    f.job_id = a.job_id;
    f.no = a.no;
    f.gpus = a.gpus;
    f.nodes = a.nodes == 0 ? 1 : a.nodes;
    f.started_ms = a.started_ms;
    f.running_ms = a.running_ms;
    if (a.state == AttemptState::exited) f.ended_ms = a.ended_ms.value_or(a.started_ms);
    f.cause = a.cause;
    f.mfu = a.mfu;
    f.mfu_time_s = a.mfu_time_s;
    f.last_alive_ms = a.last_alive_ms;
    f.due_ms = a.due_ms;
    f.first_progress_ms = a.first_progress_ms;
    in.attempts.push_back(f);
  }
  auto failures = store.node_events_of_kinds(kNodeFailureKinds, window_start);
  if (!failures) return failures.error();
  // One per incident (scheduler/health/incidents.h): a GPU error and the NODE_FAIL of the same
  // attempt are one failure of the node.
  std::set<std::tuple<std::string, std::string, std::string>> counted;
  for (const auto& e : *failures) {
    if (!e.incident.empty() && !counted.insert({e.cluster, e.node, e.incident}).second) continue;
    in.node_failures.push_back({e.cluster, e.node, e.at_ms});
  }
  return Ok{};
}

}  // namespace

Result<ScorecardInputs> gather_scorecard_inputs(StoreReader& store,
                                                const std::vector<ClusterSpec>& clusters,
                                                Millis now, Millis window_start,
                                                bool for_placement) {
  ScorecardInputs in;
  in.now = now;
  in.window_start = window_start;
  if (for_placement) {
    if (auto r = gather_attempt_facts(store, clusters, window_start, in); !r) return r.error();
    return in;
  }
  auto rows = store.clusters();
  if (!rows) return rows.error();
  auto counts = store.node_counts();
  if (!counts) return counts.error();
  for (const auto& row : *rows) {
    const ClusterSpec* spec = find_cluster(clusters, row.name);
    if (!spec) continue;
    ClusterFact fact{row.name, spec->vendor, row.created_ms, 0, 0};  // no vendor: no vendor card
    for (const auto& c : *counts) {
      if (c.cluster != row.name) continue;
      fact.nodes = c.nodes;
      fact.quarantined_nodes = c.out_of_service;
    }
    if (fact.nodes == 0) fact.nodes = spec->nodes;  // not polled yet: as configured
    fact.promised_ms = spec->delivery.promised_ms;
    fact.delivered_ms = row.delivered_ms;
    // Its availability counts from delivery: before it, the provider owed nothing to answer.
    if (row.delivered_ms) {
      fact.since_ms = *row.delivered_ms;
    } else if (row.admission == Admission::pending_delivery) {
      fact.since_ms = now;
    }
    in.clusters.push_back(fact);
  }
  auto log = store.health_log(0);
  if (!log) return log.error();
  for (const auto& h : *log) {
    in.health.push_back({h.cluster, h.at_ms, h.health == SiteHealth::healthy});
  }
  if (auto r = gather_attempt_facts(store, clusters, window_start, in); !r) return r.error();
  auto saves = store.checkpoint_save_times_since(window_start);
  if (!saves) return saves.error();
  for (const auto& s : *saves) {
    if (!s.cluster.empty()) in.checkpoints.push_back({s.cluster, s.save_time_s});
  }
  auto stalls = store.io_stall_clusters_since(window_start);
  if (!stalls) return stalls.error();
  in.io_stalls = std::move(*stalls);
  auto tickets = store.tickets_since(window_start);
  if (!tickets) return tickets.error();
  for (const auto& t : *tickets) {
    in.tickets.push_back({t.cluster, t.opened_ms, t.first_response_ms, t.resolved_ms});
  }
  return in;
}

std::map<std::string, ClusterHistory> cluster_histories(const ScorecardInputs& in) {
  std::map<std::string, ClusterHistory> out;
  std::map<std::string, std::vector<double>> saves;
  // The cluster's MFU is its attempts' work over their time (MfuOverTime), not their median.
  std::map<std::string, MfuOverTime> mfus;
  for (const auto& a : in.attempts) {
    ClusterHistory& h = out[a.cluster];
    const Millis start = std::max(a.running_ms.value_or(a.started_ms), in.window_start);
    const Millis end = a.ended_ms.value_or(in.now);
    if (end > start) h.node_hours += a.nodes * static_cast<double>(end - start) / 3'600'000.0;
    if (a.mfu) {
      mfus[a.cluster].add(*a.mfu, a.mfu_time_s);
      h.mfu_measured_ms = std::max(h.mfu_measured_ms.value_or(end), end);
      if (end > start) h.mfu_hours += static_cast<double>(end - start) / 3'600'000.0;
    }
  }
  // Restart cost: the scorecard's two figures, detection and recovery, added (their medians);
  // the prior stands in until a restart there has been seen through.
  for (const auto& [name, samples] : restart_samples(in)) {
    auto recovery = median(samples.recovery_s);
    if (recovery) out[name].restart_s = median(samples.detection_s).value_or(0) + *recovery;
  }
  for (const auto& f : in.node_failures) ++out[f.cluster].node_failures;
  for (const auto& c : in.checkpoints) saves[c.cluster].push_back(c.save_time_s);
  for (auto& [name, h] : out) {
    h.mfu = mfus[name].value();
    h.checkpoint_cost_s = median(saves[name]);
  }
  return out;
}

Result<ClusterHistories> placement_histories(StoreReader& store,
                                             const std::vector<ClusterSpec>& clusters, Millis now) {
  auto in = gather_scorecard_inputs(store, clusters, now, now - kHistoryWindowMs);
  if (!in) return in.error();
  return cluster_histories(*in);
}

Result<void> SaveTimeWindow::refresh(StoreReader& store, Millis window_start) {
  // A clock set back widens the window to saves already let go: read it afresh.
  if (window_start < start_) reset();
  start_ = window_start;
  auto added = store.checkpoint_save_times_after(last_id_, window_start);
  if (!added) return added.error();
  for (auto& s : *added) {
    last_id_ = std::max(last_id_, s.id);
    if (s.cluster.empty()) continue;
    by_cluster_[s.cluster].insert(s.save_time_s);
    by_time_.emplace(s.at_ms, std::pair(std::move(s.cluster), s.save_time_s));
  }
  while (!by_time_.empty() && by_time_.begin()->first < window_start) {
    const auto& [cluster, save_s] = by_time_.begin()->second;
    auto& saves = by_cluster_[cluster];
    saves.erase(saves.find(save_s));
    by_time_.erase(by_time_.begin());
  }
  return Ok{};
}

std::optional<double> SaveTimeWindow::median(const std::string& cluster) const {
  auto it = by_cluster_.find(cluster);
  if (it == by_cluster_.end() || it->second.empty()) return std::nullopt;
  // As median() above: the middle value, or the mean of the two middle ones.
  const std::multiset<double>& v = it->second;
  const std::size_t n = v.size();
  auto mid = std::next(v.begin(), static_cast<std::ptrdiff_t>(n / 2));
  return n % 2 ? *mid : (*std::prev(mid) + *mid) / 2.0;
}

void SaveTimeWindow::reset() {
  last_id_ = 0;
  start_ = 0;
  by_time_.clear();
  by_cluster_.clear();
}

Result<ClusterHistories> placement_histories(StoreReader& store,
                                             const std::vector<ClusterSpec>& clusters, Millis now,
                                             SaveTimeWindow& saves) {
  const Millis window_start = now - kHistoryWindowMs;
  auto in = gather_scorecard_inputs(store, clusters, now, window_start, true);
  if (!in) return in.error();
  if (auto r = saves.refresh(store, window_start); !r) return r.error();
  ClusterHistories out = cluster_histories(*in);
  for (auto& [name, h] : out) h.checkpoint_cost_s = saves.median(name);
  return out;
}

Result<std::shared_ptr<const ClusterHistories>> HistoryCache::get(StoreReader& store, Millis now) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const bool fresh = value_ && now - at_ms_ < kHistoryRefreshMs;
    if (fresh || (value_ && refreshing_)) return value_;
    refreshing_ = true;
  }
  auto computed = placement_histories(store, clusters_.snapshot(), now);
  std::lock_guard<std::mutex> lock(mu_);
  refreshing_ = false;
  if (!computed) return computed.error();
  value_ = std::make_shared<const ClusterHistories>(std::move(*computed));
  at_ms_ = now;
  return value_;
}

}  // namespace orch
