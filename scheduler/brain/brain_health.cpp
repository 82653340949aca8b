// The brain: health (issue 4). Node standing from the ledger (quarantine, release, retirement),
// burn-in rounds, hung attempts, and the MFU watch. The rules themselves are pure functions in
// scheduler/health; this file applies them to the store.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "scheduler/brain/brain.h"
#include "scheduler/brain/brain_text.h"
#include "scheduler/brain/cluster_history.h"
#include "scheduler/common/text.h"
#include "scheduler/health/burn_in.h"
#include "scheduler/health/mfu_watch.h"
#include "scheduler/health/quarantine.h"
#include "scheduler/model/launch_request_json.h"

namespace orch {
namespace {

using brain_text::base36;

constexpr Millis kBurnInRetryMs = 60'000;
constexpr Millis kIncidentMs = 10LL * 60'000;

QuarantinePolicy policy_of(const ClusterSpec* spec) {
  QuarantinePolicy p;
  if (!spec) return p;
  p.failures_to_quarantine = spec->quarantine.failures;
  p.window_ms = static_cast<Millis>(spec->quarantine.window_h * 3'600'000.0);
  p.cooldown_ms = static_cast<Millis>(spec->quarantine.cooldown_h * 3'600'000.0);
  p.retire_after = spec->quarantine.retire_after;
  return p;
}

NodeHealth health_of(const NodeRow& n) {
  return {n.state, n.quarantines, n.quarantined_at_ms};
}

// A probe round of the cluster's burn-in settings (every node unless nodes are added).
ProbeRequest probe_request(const ClusterSpec& spec, const std::string& kind, Millis now) {
  ProbeRequest req;
  req.token = kind + spec.name + "-" + base36(static_cast<std::uint64_t>(now));
  req.dir = spec.burn_in.dir;
  req.io_bytes = static_cast<std::int64_t>(spec.burn_in.io_mb * 1024 * 1024);
  req.compute_s = spec.burn_in.compute_s;
  req.timeout_s = spec.burn_in.timeout_s;
  return req;
}

OutboxRow probe_action(const ClusterSpec& spec, const ProbeRequest& req, Millis now) {
  OutboxRow row;
  row.cluster = spec.name;
  row.kind = ActionKind::probe;
  row.token = req.token;
  row.payload = probe_request_to_json(req);
  row.created_ms = now;
  return row;
}

// The stored row of one node's verdict, with its figures when the round returned them.
ProbeRow probe_row(const std::string& cluster, const ProbeCompleted& e, const NodeProbeVerdict& v,
                   Millis now) {
  ProbeRow p{0,        cluster,      v.node,       e.token,      now, v.passed,
             v.reason, std::nullopt, std::nullopt, std::nullopt, ""};
  if (!e.result.ok()) return p;
  for (const auto& r : *e.result) {
    if (r.node != v.node) continue;
    p.gemm_gflops = r.gemm_gflops;
    p.write_mb_s = r.write_mb_s;
    p.read_mb_s = r.read_mb_s;
    p.raw = r.raw;
  }
  return p;
}

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", v * 100.0);
  return buf;
}

}  // namespace

// ---- node standing ----------------------------------------------------------------------

Result<void> Brain::set_standing(NodeRow& node, NodeState to, const std::string& reason,
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

Result<void> Brain::judge_node_after_failure(const std::string& cluster, const std::string& name) {
  auto found = store_.node(cluster, name);
  if (!found) return found.error();
  if (!*found) return Ok{};  // a node the site never listed: nothing to take out of service
  NodeRow node = **found;
  if (node.state != NodeState::active) return Ok{};
  const Millis now = clock_.now_ms();
  const QuarantinePolicy policy = policy_of(cluster_spec(cluster));
  std::vector<std::string> kinds = {"node-unhealthy", "node-failure", "gpu-error",
                                    "probe-failed",   "mfu-outlier",  "hang"};
  auto times = store_.node_event_times(cluster, name, kinds, now - policy.window_ms);
  if (!times) return times.error();
  // Only failures since the node last came back count: a release starts a clean slate.
  std::vector<Millis> relevant;
  auto since = store_.node_event_times(cluster, name, {"released"}, 0);
  if (!since) return since.error();
  const Millis clean_from = since->empty() ? 0 : since->back();
  // One incident leaves several entries (the site marks the node down, and the job on it fails
  // with node_lost): entries within kIncidentMs of the previous one are the same failure.
  for (Millis t : *times) {
    if (t < clean_from) continue;
    if (!relevant.empty() && t - relevant.back() < kIncidentMs) continue;
    relevant.push_back(t);
  }
  NodeDecision d = after_failure(health_of(node), relevant, now, policy);
  if (!d.to) return Ok{};
  return set_standing(node, *d.to, d.reason, true);
}

Result<BrainReply> Brain::on(const SetNodeState& e) {
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
  if (e.to == NodeState::active) {
    if (auto r = place_waiting_jobs(); !r) return r.error();
  }
  return BrainReply{0, std::string(to_string(node.state))};
}

// ---- burn-in ----------------------------------------------------------------------------

Result<void> Brain::start_burn_in(ClusterRow& cluster, const std::string& why) {
  const ClusterSpec* spec = cluster_spec(cluster.name);
  if (!spec) return Ok{};
  const Millis now = clock_.now_ms();
  ProbeRequest req = probe_request(*spec, "orch-burnin-", now);
  if (auto r = store_.enqueue(probe_action(*spec, req, now)); !r) return r.error();
  cluster.admission = Admission::burn_in;
  cluster.burn_in_token = req.token;
  if (auto r = store_.update_cluster(cluster); !r) return r;
  return store_.add_event(
      std::nullopt, std::nullopt, now, "burn-in",
      "burn-in of " + cluster.name + " started (" + why + "), round " + req.token);
}

Result<BrainReply> Brain::on(const StartBurnIn& e) {
  if (!cluster_spec(e.cluster)) {
    return make_error(ErrorKind::not_found, "no cluster \"" + e.cluster + "\"");
  }
  auto row = store_.cluster(e.cluster);
  if (!row) return row.error();
  if (!*row) return make_error(ErrorKind::not_found, "no cluster \"" + e.cluster + "\"");
  ClusterRow c = **row;
  if (c.admission == Admission::burn_in) {
    return make_error(ErrorKind::conflict, "cluster " + c.name + " is already burning in (round " +
                                               c.burn_in_token + "); wait for it to finish");
  }
  if (auto r = start_burn_in(c, "requested"); !r) return r.error();
  return BrainReply{0, std::string(to_string(c.admission))};
}

Result<void> Brain::start_due_burn_ins() {
  auto rows = store_.clusters();
  if (!rows) return rows.error();
  const Millis now = clock_.now_ms();
  for (auto c : *rows) {
    if (c.admission != Admission::pending || !cluster_spec(c.name)) continue;
    // Judging needs the site's node list: a verdict on a node the ledger does not know yet
    // could not quarantine it. The first inventory comes with the worker's first poll.
    auto known = store_.nodes(c.name);
    if (!known) return known.error();
    if (known->empty()) continue;
    auto last = store_.probes(c.name, "", 1);
    if (!last) return last.error();
    if (!last->empty() && now - last->front().at_ms < kBurnInRetryMs) continue;
    if (auto r = start_burn_in(c, "the cluster is new"); !r) return r;
  }
  return Ok{};
}

Result<BrainReply> Brain::on(const ProbeCompleted& e) {
  if (auto r = store_.mark_action_done(e.outbox_id, clock_.now_ms()); !r) return r.error();
  auto row = store_.cluster(e.cluster);
  if (!row) return row.error();
  if (!*row || !cluster_spec(e.cluster)) return BrainReply{};
  ClusterRow c = **row;
  if (c.burn_in_token == e.token) {
    if (auto r = judge_burn_in_round(c, e); !r) return r.error();
  } else {
    if (auto r = judge_release_round(e); !r) return r.error();
  }
  if (auto r = place_waiting_jobs(); !r) return r.error();
  return BrainReply{};
}

Result<void> Brain::judge_burn_in_round(ClusterRow& c, const ProbeCompleted& e) {
  const Millis now = clock_.now_ms();
  const ClusterSpec* spec = cluster_spec(c.name);
  auto known = store_.nodes(c.name);
  if (!known) return known.error();
  c.burn_in_token.clear();
  if (!e.result.ok()) {
    const Error& err = e.result.error();
    // A provider that cannot probe would keep the cluster out of service forever: admit it and
    // say so. Any other failure is the site's, not the nodes': try again in a while.
    c.admission = err.kind == ErrorKind::unsupported ? Admission::active : Admission::pending;
    if (auto r = store_.update_cluster(c); !r) return r;
    for (const auto& n : *known) {
      ProbeRow p{0,
                 c.name,
                 n.name,
                 e.token,
                 now,
                 false,
                 "round failed: " + err.message,
                 std::nullopt,
                 std::nullopt,
                 std::nullopt,
                 ""};
      if (auto r = store_.add_probe(p); !r) return r;
    }
    return store_.add_event(
        std::nullopt, std::nullopt, now, "burn-in",
        "burn-in of " + c.name + " failed: " + err.message +
            (c.admission == Admission::active ? "; the cluster is admitted without it"
                                              : "; retrying in a minute"));
  }
  std::vector<std::string> expected;
  for (const auto& n : *known) expected.push_back(n.name);
  for (const auto& r : *e.result) {
    if (std::find(expected.begin(), expected.end(), r.node) == expected.end() && known->empty()) {
      expected.push_back(r.node);
    }
  }
  BurnInPolicy policy{spec->burn_in.min_compute_ratio, spec->burn_in.min_io_ratio};
  auto verdicts = judge_burn_in(expected, *e.result, policy);
  int failed = 0;
  for (const auto& v : verdicts) {
    if (auto r = store_.add_probe(probe_row(c.name, e, v, now)); !r) return r;
    if (auto r = node_event(c.name, v.node, v.passed ? "probe-passed" : "probe-failed",
                            "burn-in: " + v.reason);
        !r) {
      return r;
    }
    if (v.passed) continue;
    ++failed;
    auto node = store_.node(c.name, v.node);
    if (!node) return node.error();
    if (!*node) continue;
    NodeRow n = **node;
    NodeDecision d = after_probe(health_of(n), false, v.reason, now, policy_of(spec));
    if (d.to) {
      if (auto r = set_standing(n, *d.to, d.reason, true); !r) return r;
    }
  }
  c.admission = Admission::active;
  if (auto r = store_.update_cluster(c); !r) return r;
  return store_.add_event(std::nullopt, std::nullopt, now, "burn-in",
                          "burn-in of " + c.name +
                              " done: " + std::to_string(verdicts.size() - failed) + " of " +
                              std::to_string(verdicts.size()) + " node(s) passed");
}

Result<void> Brain::start_release_probes() {
  const Millis now = clock_.now_ms();
  for (const auto& spec : clusters_) {
    auto nodes = store_.nodes(spec.name);
    if (!nodes) return nodes.error();
    const QuarantinePolicy policy = policy_of(&spec);
    std::vector<NodeRow> due;
    for (const auto& n : *nodes) {
      if (n.probe_token.empty() && n.healthy && release_probe_due(health_of(n), now, policy)) {
        due.push_back(n);
      }
    }
    if (due.empty()) continue;
    ProbeRequest req = probe_request(spec, "orch-release-", now);
    for (auto& n : due) {
      req.nodes.push_back(n.name);
      n.probe_token = req.token;
      if (auto r = store_.set_node_standing(n); !r) return r;
    }
    if (auto r = store_.enqueue(probe_action(spec, req, now)); !r) return r.error();
  }
  return Ok{};
}

Result<void> Brain::judge_release_round(const ProbeCompleted& e) {
  const Millis now = clock_.now_ms();
  const ClusterSpec* spec = cluster_spec(e.cluster);
  auto nodes = store_.nodes(e.cluster);
  if (!nodes) return nodes.error();
  std::vector<std::string> expected;
  for (const auto& n : *nodes) {
    if (n.probe_token == e.token) expected.push_back(n.name);
  }
  if (expected.empty()) return Ok{};
  std::vector<NodeProbeVerdict> verdicts;
  if (e.result.ok()) {
    // Judged on their own checks: the healthy nodes are busy with work, not probing beside them.
    verdicts = judge_burn_in(expected, *e.result, BurnInPolicy{0, 0});
  } else {
    for (const auto& n : expected) {
      verdicts.push_back({n, false, "probe round failed: " + e.result.error().message, 0, 0});
    }
  }
  for (const auto& v : verdicts) {
    auto found = store_.node(e.cluster, v.node);
    if (!found) return found.error();
    if (!*found) continue;
    NodeRow n = **found;
    n.probe_token.clear();
    if (auto r = store_.add_probe(probe_row(e.cluster, e, v, now)); !r) return r;
    NodeDecision d = after_probe(health_of(n), v.passed, v.reason, now, policy_of(spec));
    if (d.to) {
      if (auto r = set_standing(n, *d.to, d.reason, false); !r) return r;
      continue;
    }
    // Still out: the next release probe waits a full cool-down from now.
    if (!v.passed && n.state == NodeState::quarantined) n.quarantined_at_ms = now;
    if (auto r = store_.set_node_standing(n); !r) return r;
    if (auto r = node_event(e.cluster, v.node, v.passed ? "probe-passed" : "probe-failed",
                            "release check: " + v.reason);
        !r) {
      return r;
    }
  }
  return Ok{};
}

// ---- hangs ------------------------------------------------------------------------------

Result<void> Brain::detect_hangs() {
  const Millis now = clock_.now_ms();
  // One query finds the candidates: a tick over hundreds of healthy jobs reads nothing more.
  auto silent_rows = store_.silent_attempts(now);
  if (!silent_rows) return silent_rows.error();
  for (auto a : *silent_rows) {
    auto job = store_.job(a.job_id);
    if (!job) return job.error();
    if (!*job || is_terminal((*job)->state)) continue;
    const double hang_after_s = static_cast<double>(a.hang_after_ms) / 1000.0;
    const Millis since = a.last_progress_ms.value_or(a.running_ms.value_or(a.started_ms));
    const Millis silent = now - since;
    char detail[160];
    std::snprintf(detail, sizeof detail, "no progress line for %.0f s (hang_after %.0f s)%s",
                  static_cast<double>(silent) / 1000.0, hang_after_s,
                  a.last_step ? (", last step " + std::to_string(*a.last_step)).c_str() : "");
    if (auto r = end_attempt(a, ExitCause::hang, detail); !r) return r;
    if (auto r = request_cancel(a, "hung: " + std::string(detail)); !r) return r;
    if (auto r = implicate_nodes(a, ExitCause::hang, {}, detail); !r) return r;
    if (auto r = after_attempt_end(a); !r) return r;
  }
  return Ok{};
}

// ---- failures implicating nodes ---------------------------------------------------------

Result<void> Brain::implicate_nodes(const AttemptRow& attempt, ExitCause cause,
                                    const std::vector<std::string>& named_nodes,
                                    const std::string& evidence) {
  const char* kind = nullptr;
  if (cause == ExitCause::gpu_error) kind = "gpu-error";
  if (cause == ExitCause::hang) kind = "hang";
  if (!kind) return Ok{};
  // The nodes the evidence names; else the node of a one-node attempt. A multi-node failure that
  // names no node implicates none: quarantining every node of a big job for one fault would
  // empty the cluster.
  std::vector<std::string> nodes = named_nodes;
  if (nodes.empty() && attempt.nodes.size() == 1) nodes = attempt.nodes;
  for (const auto& n : nodes) {
    std::string msg = std::string(kind) + " under job " + std::to_string(attempt.job_id) +
                      " attempt " + std::to_string(attempt.no) + ": " + evidence;
    if (auto r = node_event(attempt.cluster, n, kind, msg, &attempt); !r) return r;
  }
  return Ok{};
}

// ---- MFU --------------------------------------------------------------------------------

Result<void> Brain::watch_mfu(AttemptRow& a, const JobRow& job,
                              const std::vector<MfuSample>& samples) {
  if (samples.empty()) return Ok{};
  const Millis now = clock_.now_ms();
  std::string nodes_text;
  for (const auto& n : a.nodes) nodes_text += (nodes_text.empty() ? "" : ",") + n;
  double sum = 0;
  for (const auto& s : samples) sum += s.mfu;
  // One observation's samples share its time, so they share one minute bucket: one write.
  if (auto r = store_.add_mfu_samples(a.id, a.cluster, nodes_text, now, sum,
                                      static_cast<int>(samples.size()));
      !r) {
    return r;
  }
  MfuWatchPolicy policy;
  policy.drop_fraction = job.spec.health.mfu_drop_percent / 100.0;
  std::vector<std::string> suspects;
  MfuWatchState state = mfu_watch_from_json(a.mfu_watch, suspects);
  for (const auto& sample : samples) {
    if (auto r = watch_one_sample(a, state, suspects, sample, policy); !r) return r;
  }
  a.mfu_watch = mfu_watch_to_json(state, suspects);
  return Ok{};
}

Result<void> Brain::watch_one_sample(AttemptRow& a, MfuWatchState& state,
                                     std::vector<std::string>& suspects, const MfuSample& sample,
                                     const MfuWatchPolicy& policy) {
  MfuStep step = observe_mfu(state, sample.mfu, clock_.now_ms(), policy);
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
  for (const auto& node : find_stragglers(times, policy)) {
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

const std::map<std::string, ClusterHistory>& Brain::histories() {
  const Millis now = clock_.now_ms();
  if (histories_at_ms_ && now - *histories_at_ms_ < kHistoryRefreshMs) return histories_;
  histories_at_ms_ = now;
  // Placement works without history (priors stand in); a failed read must not stop it.
  auto computed = placement_histories(store_, clusters_, now);
  histories_ = computed ? std::move(*computed) : ClusterHistories{};
  return histories_;
}

}  // namespace orch
