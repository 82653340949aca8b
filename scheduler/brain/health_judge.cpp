// The brain's health part (issue 4): the node ledger and what the sites list of their nodes,
// each node's standing (quarantine, release, retirement), the evidence that implicates nodes,
// and the MFU watch. Burn-in and release probe rounds are in health_probes.cpp. The rules are
// pure functions in scheduler/health; this file applies them to the store.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "scheduler/brain/health_judge.h"
#include "scheduler/brain/node_standing.h"
#include "scheduler/common/text.h"
#include "scheduler/health/mfu_watch.h"
#include "scheduler/lifecycle/mfu.h"

namespace orch {
namespace {

// A node's row as its site's report writes it (Store::upsert_node's columns), seen at `now`.
NodeRow reported_row(const std::string& cluster, const NodeInfo& n, Millis now) {
  NodeRow row;
  row.cluster = cluster;
  row.name = n.name;
  row.gpus = n.gpus;
  row.healthy = n.healthy;
  row.reason = n.reason;
  row.seen_ms = now;
  row.gpus_busy = n.gpus_busy;
  row.cpus = n.cpus;
  row.memory_mb = n.memory_mb;
  return row;
}

// The newest ledger entries of a node read to find an earlier hang (a bounded read).
constexpr int kHangLookback = 200;

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", v * 100.0);
  return buf;
}

}  // namespace

NodeHealth HealthJudge::health_of(const NodeRow& n) {
  return {n.state, n.quarantines, n.quarantined_at_ms};
}

// ---- node standing ----------------------------------------------------------------------

Result<void> HealthJudge::set_standing(NodeRow& node, NodeState to, const std::string& reason,
                                       bool counts) {
  const Millis now = clock_.now_ms();
  const NodeState from = node.state;
  node.state = to;
  node.state_reason = reason;
  if (to == NodeState::active) {
    node.quarantined_at_ms.reset();
  } else {
    node.quarantined_at_ms = now;
    if (counts && from == NodeState::active) ++node.quarantines;
  }
  if (auto r = store_.set_node_standing(node); !r) return r;
  std::string kind = to == NodeState::active ? "released" : std::string(to_string(to));
  std::string msg = "node " + node.name + " " + std::string(to_string(from)) + " -> " +
                    std::string(to_string(to)) + ": " + reason;
  NodeEventRow row{0, node.cluster, node.name, now, kind, msg, std::nullopt, std::nullopt};
  if (auto r = store_.add_node_event(row); !r) return r.error();
  return Ok{};
}

Result<void> HealthJudge::judge_node_after_failure(const std::string& cluster,
                                                   const std::string& name) {
  auto found = store_.node(cluster, name);
  if (!found) return found.error();
  if (!*found) return Ok{};  // a node the site never listed: nothing to take out of service
  NodeRow node = **found;
  if (node.state == NodeState::retired) return Ok{};
  const Millis now = clock_.now_ms();
  const QuarantinePolicy policy = quarantine_policy(cluster_spec(cluster));
  // One per incident (scheduler/health/incidents.h): the site marking the node down and the job
  // on it failing are one failure; every job it killed is one more.
  auto relevant = counted_failures(store_, cluster, name, policy, now);
  if (!relevant) return relevant.error();
  // Its rate against its peers' (node_rate.h): a lemon is retired; the count rule applies only
  // where the cluster's rate makes its count evidence.
  auto rate = node_rate_verdict(store_, cluster, name, now);
  if (!rate) return rate.error();
  const bool count_rule = count_rule_applies(rate->peer_rate, node.gpus, policy);
  NodeDecision d =
      after_failure_by_rate(health_of(node), *rate, count_rule, *relevant, now, policy);
  if (!d.to) return Ok{};
  return set_standing(node, *d.to, d.reason, node.state == NodeState::active);
}

Result<BrainReply> HealthJudge::on(const SetNodeState& e) {
  if (!cluster_spec(e.cluster)) {
    return make_error(ErrorKind::not_found, "no cluster \"" + e.cluster + "\"");
  }
  auto found = store_.node(e.cluster, e.node);
  if (!found) return found.error();
  if (!*found) {
    auto known = store_.nodes(e.cluster);
    std::vector<std::string> names;
    if (known) {
      for (const auto& n : *known) names.push_back(n.name);
    }
    return make_error(ErrorKind::not_found,
                      "cluster " + e.cluster + " has no node \"" + e.node + "\"" +
                          (names.empty() ? std::string(" (it has not reported its nodes yet)")
                                         : "; its nodes: " + join(names)));
  }
  NodeRow node = **found;
  if (node.state == e.to) {
    return BrainReply{0, std::string(to_string(node.state))};
  }
  std::string reason = (e.to == NodeState::active ? "released by hand" : "quarantined by hand");
  if (!e.reason.empty()) reason += ": " + e.reason;
  node.probe_token.clear();
  if (auto r = set_standing(node, e.to, reason, false); !r) return r.error();
  return BrainReply{0, std::string(to_string(node.state))};
}

// ---- failures implicating nodes ---------------------------------------------------------

Result<void> HealthJudge::implicate_nodes(const AttemptRow& attempt, ExitCause cause,
                                          const std::vector<std::string>& named_nodes,
                                          const std::string& evidence) {
  const char* kind = nullptr;
  if (cause == ExitCause::gpu_error) kind = "gpu-error";
  // The live watch's fatal Xid or ECC rise (issue 43): named by the site, and out at once.
  if (cause == ExitCause::gpu_xid || cause == ExitCause::gpu_ecc) kind = "gpu-fault";
  if (cause == ExitCause::hang) kind = "hang";
  if (!kind) return Ok{};
  // The nodes the evidence names; else the node of a one-node attempt. A multi-node failure that
  // names no node implicates none: quarantining every node of a big job for one fault would
  // empty the cluster.
  std::vector<std::string> nodes = named_nodes;
  if (nodes.empty() && attempt.nodes.size() == 1) nodes = attempt.nodes;
  if (cause == ExitCause::hang) return note_hang(attempt, evidence);
  for (const auto& n : nodes) {
    std::string msg = std::string(kind) + " under job " + std::to_string(attempt.job_id) +
                      " attempt " + std::to_string(attempt.no) + ": " + evidence;
    if (auto r = node_event(attempt.cluster, n, kind, msg, &attempt); !r) return r;
    if (quarantines_at_once(kind)) {
      if (auto r = put_out_at_once(attempt.cluster, n, evidence); !r) return r;
    }
  }
  return Ok{};
}

// A fault that condemns the node by itself (quarantine.h, after_fatal_fault): the ledger has
// counted it (node_event); a node still active after that is put out now.
Result<void> HealthJudge::put_out_at_once(const std::string& cluster, const std::string& name,
                                          const std::string& why) {
  auto found = store_.node(cluster, name);
  if (!found) return found.error();
  if (!*found) return Ok{};  // a node the site never listed: nothing to take out of service
  NodeRow node = **found;
  NodeDecision d =
      after_fatal_fault(health_of(node), why, quarantine_policy(cluster_spec(cluster)));
  if (!d.to) return Ok{};
  return set_standing(node, *d.to, d.reason, true);
}

// A hang is most often the job's own (a deadlock, a stuck data loader), so it counts against a
// node only when the same node hung under another job too, within the quarantine window. The
// first hang leaves a "hang-seen" entry, which the ledger shows but does not count. (A node whose
// own heartbeats stopped is a node loss, judged by the site, not a hang.)
Result<void> HealthJudge::note_hang(const AttemptRow& attempt, const std::string& evidence) {
  const Millis since = clock_.now_ms() - quarantine_policy(cluster_spec(attempt.cluster)).window_ms;
  for (const auto& n : attempt.nodes) {
    auto recent = store_.node_events(attempt.cluster, n, kHangLookback);
    if (!recent) return recent.error();
    bool seen_elsewhere = false;
    for (const auto& e : *recent) {
      if (e.at_ms < since) break;  // newest first
      seen_elsewhere = seen_elsewhere || ((e.kind == "hang-seen" || e.kind == "hang") && e.job_id &&
                                          *e.job_id != attempt.job_id);
    }
    std::string msg = "hang under job " + std::to_string(attempt.job_id) + " attempt " +
                      std::to_string(attempt.no) + ": " + evidence;
    if (seen_elsewhere) msg += "; this node hung under another job too";
    if (auto r =
            node_event(attempt.cluster, n, seen_elsewhere ? "hang" : "hang-seen", msg, &attempt);
        !r) {
      return r;
    }
  }
  return Ok{};
}

// ---- MFU --------------------------------------------------------------------------------

Result<void> HealthJudge::watch_mfu(AttemptRow& a, const JobRow& job,
                                    const std::vector<MfuSample>& samples,
                                    std::vector<std::string>* confirmed) {
  if (auto r = flag_implausible_mfu(a, job); !r) return r;
  if (samples.empty()) return Ok{};
  const Millis now = clock_.now_ms();
  std::string nodes_text;
  for (const auto& n : a.nodes) nodes_text += (nodes_text.empty() ? "" : ",") + n;
  // Work over time: each step's MFU weighted by its step time (MfuBucketRow).
  double work = 0;
  double time_s = 0;
  int counted = 0;
  for (const auto& s : samples) {
    if (!s.mfu || !a.mfu_flag.empty()) continue;
    work += *s.mfu * s.seconds;
    time_s += s.seconds;
    ++counted;
  }
  // One observation's samples share its time, so they share one minute bucket: one write.
  if (counted > 0) {
    if (auto r = store_.add_mfu_samples(a.id, a.cluster, nodes_text, now, work, time_s, counted);
        !r) {
      return r;
    }
  }
  MfuWatchPolicy policy;
  policy.drop_fraction = job.spec.health.mfu_drop_percent / 100.0;
  std::vector<std::string> suspects;
  MfuWatchState state = mfu_watch_from_json(a.mfu_watch, suspects);
  for (const auto& sample : samples) {
    if (auto r = watch_one_sample(a, state, suspects, sample, policy, confirmed); !r) return r;
  }
  a.mfu_watch = mfu_watch_to_json(state, suspects);
  return Ok{};
}

Result<void> HealthJudge::flag_implausible_mfu(AttemptRow& a, const JobRow& job) {
  if (a.mfu_flag.empty() && a.mfu && !mfu_plausible(*a.mfu)) {
    const ClusterSpec* spec = cluster_spec(a.cluster);
    a.mfu_flag = mfu_flag_text(*a.mfu, job.spec.model,
                               spec ? spec->peak_flops_per_gpu() : std::nullopt, a.gpus, a.cluster);
    // One event for the job: its next attempts run the same spec and are flagged quietly.
    auto others = store_.attempts_of(a.job_id);
    if (!others) return others.error();
    const bool told = std::any_of(others->begin(), others->end(), [&](const AttemptRow& o) {
      return o.id != a.id && !o.mfu_flag.empty();
    });
    if (!told) {
      if (auto r = event(a.job_id, a.no, "mfu-misconfigured", a.mfu_flag); !r) return r;
    }
  }
  if (!a.mfu_flag.empty()) a.mfu.reset();
  return Ok{};
}

Result<void> HealthJudge::watch_one_sample(AttemptRow& a, MfuWatchState& state,
                                           std::vector<std::string>& suspects,
                                           const MfuSample& sample, const MfuWatchPolicy& policy,
                                           std::vector<std::string>* confirmed) {
  const Millis now = clock_.now_ms();
  MfuStep step;
  if (sample.mfu && a.mfu_flag.empty()) {
    step = observe_mfu(state, *sample.mfu, now, policy, sample.seconds);
  }
  const std::string on =
      a.nodes.empty() ? std::string("nodes not named by the site") : "nodes " + join(a.nodes);
  if (step.change == MfuChange::dropped) {
    std::string msg = "MFU " + percent(step.window_mean) + " is " +
                      percent(1.0 - step.window_mean / step.baseline) + " below its baseline " +
                      percent(step.baseline) + " on " + a.cluster + " (" + on + ")";
    if (auto r = event(a.job_id, a.no, "mfu-drop", msg); !r) return r;
  } else if (step.change == MfuChange::recovered) {
    std::string msg = "MFU " + percent(step.window_mean) + " is back near its baseline " +
                      percent(step.baseline) + " on " + a.cluster;
    if (auto r = event(a.job_id, a.no, "mfu-recovered", msg); !r) return r;
  }
  if (!sample.ranks || sample.ranks->empty()) return Ok{};
  std::vector<RankTime> times;
  for (const auto& r : *sample.ranks) times.push_back({r.rank, r.node, r.step_time_s});
  const std::vector<std::string> slowest = find_stragglers(times, policy);
  for (const auto& node : tally_stragglers(state, slowest, now, policy)) {
    const StragglerTally& t = state.stragglers[node];
    std::string msg = "straggler confirmed under job " + std::to_string(a.job_id) + " attempt " +
                      std::to_string(a.no) + ": its ranks on " + node + " were the slowest in " +
                      std::to_string(t.reports) + " rank reports over " +
                      std::to_string((now - t.first_ms) / 1000) + " s";
    if (auto r = event(a.job_id, a.no, "straggler-confirmed", msg); !r) return r;
    if (confirmed) confirmed->push_back(node);
  }
  for (const auto& node : slowest) {
    // Each node is a suspect once per attempt: a slow rank prints on every step.
    if (std::find(suspects.begin(), suspects.end(), node) != suspects.end()) continue;
    suspects.push_back(node);
    std::string msg = "straggler under job " + std::to_string(a.job_id) + " attempt " +
                      std::to_string(a.no) + ": its ranks on " + node +
                      " are the slowest of the step";
    if (auto r = event(a.job_id, a.no, "straggler", msg); !r) return r;
    if (auto r = node_event(a.cluster, node, "mfu-outlier", msg, &a); !r) return r;
  }
  return Ok{};
}

const std::map<std::string, ClusterHistory>& HealthJudge::histories() {
  const Millis now = clock_.now_ms();
  if (histories_at_ms_ && now - *histories_at_ms_ < kHistoryRefreshMs) return histories_;
  histories_at_ms_ = now;
  // Placement works without history (priors stand in); a failed read must not stop it.
  auto computed = placement_histories(store_, clusters_, now, save_times_);
  histories_ = computed ? std::move(*computed) : ClusterHistories{};
  return histories_;
}

// ---- nodes ------------------------------------------------------------------------------

Result<void> HealthJudge::node_event(const std::string& cluster, const std::string& node,
                                     const std::string& kind, const std::string& message,
                                     const AttemptRow* attempt) {
  NodeEventRow row;
  row.cluster = cluster;
  row.node = node;
  row.at_ms = clock_.now_ms();
  row.kind = kind;
  row.message = message;
  if (attempt) {
    row.job_id = attempt->job_id;
    row.attempt_no = attempt->no;
  }
  auto incident = incident_of(store_, row);
  if (!incident) return incident.error();
  row.incident = std::move(*incident);
  auto first = first_work_failure(store_, row);
  if (!first) return first.error();
  if (auto r = store_.add_node_event(row); !r) return r.error();
  if (*first) {
    if (auto r = store_.add_node_work_failure(cluster, node); !r) return r;
  }
  if (is_failure_kind(kind)) return judge_node_after_failure(cluster, node);
  return Ok{};
}

Result<void> HealthJudge::record_health(const std::string& cluster, SiteHealth health) {
  return store_.add_health_log({cluster, clock_.now_ms(), health});
}

Result<void> HealthJudge::mark_delivered(ClusterRow& c, const std::string& how) {
  const ClusterSpec* spec = cluster_spec(c.name);
  const Millis now = clock_.now_ms();
  c.delivered_ms = now;
  c.admission = spec && spec->burn_in.on_join ? Admission::pending : Admission::active;
  if (auto r = store_.update_cluster(c); !r) return r;
  std::string msg = "cluster " + c.name + " delivered (" + how + ")";
  if (spec && spec->delivery.promised_ms) {
    const double days = static_cast<double>(now - *spec->delivery.promised_ms) / 86'400'000.0;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f day(s) %s", days < 0 ? -days : days,
                  days <= 0 ? "before" : "after");
    msg += ": " + std::string(buf) + " the promised " + spec->delivery.promised;
  }
  msg += c.admission == Admission::pending ? "; it burns in next" : "; it takes work now";
  return store_.add_event(std::nullopt, std::nullopt, now, "cluster-delivered", msg);
}

Result<BrainReply> HealthJudge::on(const InventoryObserved& e) {
  if (!cluster_spec(e.cluster)) return BrainReply{};
  const Millis now = clock_.now_ms();
  if (!e.inventory.nodes.empty()) {
    auto row = store_.cluster(e.cluster);
    if (!row) return row.error();
    if (*row && (*row)->admission == Admission::pending_delivery) {
      ClusterRow c = **row;
      const std::string how =
          "its site listed " + std::to_string(e.inventory.nodes.size()) + " node(s)";
      if (auto r = mark_delivered(c, how); !r) return r.error();
    }
  }
  auto known = listed_nodes(e.cluster);
  if (!known) return known.error();
  std::unordered_map<std::string_view, const NodeRow*> before;
  for (const auto& n : **known) before[n.name] = &n;
  std::unordered_set<std::string_view> listed;
  for (const auto& n : e.inventory.nodes) {
    listed.insert(n.name);
    // The ledger records changes of health only: a node first seen unhealthy, one that turns
    // unhealthy, one that turns healthy again. An unchanged report records nothing.
    auto was = before.find(n.name);
    const bool first_seen = was == before.end();
    const bool was_healthy = first_seen || was->second->healthy;
    if (was_healthy && !n.healthy) {
      std::string msg = "node " + n.name +
                        (first_seen ? " is unhealthy when first listed: " : " turned unhealthy: ") +
                        (n.reason.empty() ? std::string("the site gives no reason") : n.reason);
      if (auto r = node_event(e.cluster, n.name, "node-unhealthy", msg); !r) return r.error();
    } else if (!was_healthy && n.healthy) {
      std::string msg = "node " + n.name + " is healthy again";
      if (!was->second->reason.empty()) msg += " (was: " + was->second->reason + ")";
      if (auto r = node_event(e.cluster, n.name, "node-healthy", msg); !r) return r.error();
    }
    if (!first_seen) {
      const NodeRow& w = *was->second;
      if (w.gpus == n.gpus && w.healthy == n.healthy && w.reason == n.reason &&
          w.gpus_busy == n.gpus_busy && w.cpus == n.cpus && w.memory_mb == n.memory_mb) {
        continue;
      }
    }
    if (auto r = store_.upsert_node(reported_row(e.cluster, n, now)); !r) return r.error();
  }
  // A node the site no longer lists is gone until it is listed again; its history stays.
  std::vector<NodeRow> unlisted;
  for (auto n : **known) {
    if (listed.count(n.name)) continue;
    if (n.healthy) {
      n.healthy = false;
      n.reason = "no longer listed by the site";
      if (auto r = node_event(e.cluster, n.name, "node-unhealthy",
                              "node " + n.name + " turned unhealthy: " + n.reason);
          !r) {
        return r.error();
      }
    }
    unlisted.push_back(std::move(n));
  }
  // Every node listed is seen now, in one statement, after the events above (whose incidents
  // read when each node was last listed): a row is written only when its report changed, as a
  // site of thousands of nodes lists them all whenever one changes. The unlisted keep the time
  // they were last listed.
  if (auto r = store_.mark_nodes_seen(e.cluster, now); !r) return r.error();
  for (const NodeRow& n : unlisted) {
    if (auto r = store_.upsert_node(n); !r) return r.error();
  }
  remember_listing(e, std::move(unlisted), now);
  return BrainReply{};
}

Result<const std::vector<NodeRow>*> HealthJudge::listed_nodes(const std::string& cluster) {
  auto it = listed_.find(cluster);
  if (it != listed_.end()) return &it->second;
  auto rows = store_.nodes(cluster);
  if (!rows) return rows.error();
  return &(listed_[cluster] = std::move(*rows));
}

void HealthJudge::remember_listing(const InventoryObserved& e, std::vector<NodeRow> unlisted,
                                   Millis now) {
  // As the rows now stand: every listed node as reported and seen now, the unlisted as above.
  std::vector<NodeRow> rows = std::move(unlisted);
  rows.reserve(rows.size() + e.inventory.nodes.size());
  for (const auto& n : e.inventory.nodes) rows.push_back(reported_row(e.cluster, n, now));
  std::sort(rows.begin(), rows.end(),
            [](const NodeRow& a, const NodeRow& b) { return a.name < b.name; });
  // A node listed twice is one row: the next listing reads the rows as they are.
  const bool twice = std::adjacent_find(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
                       return a.name == b.name;
                     }) != rows.end();
  if (twice) {
    listed_.erase(e.cluster);
  } else {
    listed_[e.cluster] = std::move(rows);
  }
}

}  // namespace orch
