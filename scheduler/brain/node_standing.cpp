// A node's standing read from the store (node_standing.h).
#include "scheduler/brain/node_standing.h"

#include <map>
#include <unordered_map>

#include "scheduler/health/incidents.h"

namespace orch {
namespace {

// The newest ledger entries read to find the down episode in progress and the newest failure
// (a bounded read: an episode's own entries are few).
constexpr int kIncidentLookback = 64;

}  // namespace

QuarantinePolicy quarantine_policy(const ClusterSpec* spec) {
  QuarantinePolicy p;
  if (!spec) return p;
  p.failures_to_quarantine = spec->quarantine.failures;
  p.window_ms = static_cast<Millis>(spec->quarantine.window_h * 3'600'000.0);
  p.cooldown_ms = static_cast<Millis>(spec->quarantine.cooldown_h * 3'600'000.0);
  p.retire_after = spec->quarantine.retire_after;
  return p;
}

Result<std::vector<Millis>> counted_failures(StoreReader& store, const std::string& cluster,
                                             const std::string& node,
                                             const QuarantinePolicy& policy, Millis now) {
  auto released = store.node_events_since(cluster, node, {"released"}, now - policy.window_ms);
  if (!released) return released.error();
  const Millis clean_from = released->empty() ? 0 : released->back().at_ms;
  auto entries = store.node_events_since(cluster, node, failure_kinds(), now - policy.window_ms);
  if (!entries) return entries.error();
  std::vector<LedgerIncident> in;
  in.reserve(entries->size());
  for (const auto& e : *entries) in.push_back({e.at_ms, e.incident});
  return incident_times(in, clean_from);
}

Result<std::string> incident_of(StoreReader& store, const NodeEventRow& row) {
  if (!is_failure_kind(row.kind)) return std::string();
  IncidentContext c;
  c.kind = row.kind;
  c.at_ms = row.at_ms;
  c.job_id = row.job_id;
  c.attempt_no = row.attempt_no;
  auto node = store.node(row.cluster, row.node);
  if (!node) return node.error();
  auto recent = store.node_events(row.cluster, row.node, kIncidentLookback);
  if (!recent) return recent.error();
  const NodeEventRow* newest_failure = nullptr;
  const NodeEventRow* episode = nullptr;
  for (const auto& e : *recent) {  // newest first
    if (!newest_failure && is_failure_kind(e.kind)) newest_failure = &e;
    if (e.kind == "node-healthy") break;  // an episode before this one is over
    if (!episode && e.kind == "node-unhealthy") episode = &e;
  }
  const bool down = *node && !(*node)->healthy;
  if (down && episode) c.open_episode = episode->incident;
  // The site has not listed the node (healthy) since that failure was written.
  if (row.kind == "node-unhealthy" && *node && newest_failure &&
      (*node)->seen_ms <= newest_failure->at_ms) {
    c.unlisted_failure = newest_failure->incident;
  }
  return incident_key(c);
}

Result<bool> first_work_failure(StoreReader& store, const NodeEventRow& row) {
  if (!row.job_id || !is_rate_failure_kind(row.kind)) return false;
  auto recent = store.node_events(row.cluster, row.node, kIncidentLookback);
  if (!recent) return recent.error();
  for (const auto& e : *recent) {
    if (e.incident == row.incident && e.job_id && is_rate_failure_kind(e.kind)) return false;
  }
  return true;
}

namespace {

// The verdicts of every node of the cluster, or of `only` alone (the totals are the cluster's
// either way; judging one node needs no verdict of the 2,000 others).
Result<std::map<std::string, RateVerdict>> rate_verdicts(StoreReader& store,
                                                         const std::string& cluster, Millis now,
                                                         const RatePolicy& policy,
                                                         const std::string* only) {
  auto nodes = store.nodes(cluster);
  if (!nodes) return nodes.error();
  auto live = store.live_attempts(cluster);
  if (!live) return live.error();
  // GPU-hours of the attempts running now, per node: their time so far.
  std::unordered_map<std::string, double> hours;  // looked up only: its order is no part
  for (const auto& a : *live) {
    if (!a.running_ms || a.nodes.empty() || now <= *a.running_ms) continue;
    const double h = static_cast<double>(a.gpus) / static_cast<double>(a.nodes.size()) *
                     static_cast<double>(now - *a.running_ms) / 3'600'000.0;
    for (const auto& n : a.nodes) hours[n] += h;
  }
  int failures = 0;
  double total_hours = 0;
  int retired = 0;
  for (const auto& n : *nodes) {
    retired += n.state == NodeState::retired ? 1 : 0;
    hours[n.name] += n.work_gpu_hours;
    failures += n.work_failures;
    total_hours += hours[n.name];
  }
  // Each node against the rest: the totals less its own.
  std::map<std::string, RateVerdict> out;
  for (const auto& n : *nodes) {
    if (only != nullptr && n.name != *only) continue;
    RateEvidence e;
    e.failures = n.work_failures;
    e.gpu_hours = hours[n.name];
    e.peer_failures = failures - n.work_failures;
    e.peer_gpu_hours = total_hours - e.gpu_hours;
    if (n.gpus > 0) e.gpus_per_node = n.gpus;
    e.cluster_nodes = static_cast<int>(nodes->size());
    e.retired_nodes = retired - (n.state == NodeState::retired ? 1 : 0);
    out.emplace(n.name, judge_rate(e, policy));
  }
  return out;
}

}  // namespace

Result<std::map<std::string, RateVerdict>> cluster_rate_verdicts(StoreReader& store,
                                                                 const std::string& cluster,
                                                                 Millis now,
                                                                 const RatePolicy& policy) {
  return rate_verdicts(store, cluster, now, policy, nullptr);
}

Result<RateVerdict> node_rate_verdict(StoreReader& store, const std::string& cluster,
                                      const std::string& node, Millis now,
                                      const RatePolicy& policy) {
  auto all = rate_verdicts(store, cluster, now, policy, &node);
  if (!all) return all.error();
  auto it = all->find(node);
  if (it == all->end()) return judge_rate({}, policy);
  return it->second;
}

}  // namespace orch
