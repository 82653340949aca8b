// The brain's health part: burn-in rounds of a cluster that joins (or on request) and release
// probes of quarantined nodes whose cool-down passed, and the verdicts on their results.
#include <algorithm>

#include "scheduler/brain/brain_text.h"
#include "scheduler/brain/health_judge.h"
#include "scheduler/brain/node_standing.h"
#include "scheduler/health/burn_in.h"
#include "scheduler/model/launch_request_json.h"

namespace orch {
namespace {

using brain_text::base36;

constexpr Millis kBurnInRetryMs = 60'000;

// A round named for its kind ("orch-burnin-") and the cluster, at `now`.
ProbeRequest probe_request(const ClusterSpec& spec, const std::string& kind, Millis now) {
  return burn_in_probe(spec, kind + spec.name + "-" + base36(static_cast<std::uint64_t>(now)));
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

}  // namespace

GpuProbeOptions gpu_probe_options(const ClusterSpec& spec) {
  GpuProbeOptions o;
  const GpuBurnInSpec& g = spec.burn_in.gpu;
  if (!g.configured) return o;
  o.nvidia_smi = g.nvidia_smi;
  // The count the cluster promises; a node that shows fewer fails gpu-count.
  o.expect_gpus = g.nvidia_smi == "none" ? 0 : spec.gpus_per_node;
  o.dcgm_level = g.dcgm_level;
  o.dcgmi = g.dcgmi;
  o.torch_python = g.torch_python;
  o.torch_s = g.torch_s;
  return o;
}

ProbeRequest burn_in_probe(const ClusterSpec& spec, std::string token) {
  ProbeRequest req;
  req.token = std::move(token);
  req.dir = spec.burn_in.dir;
  req.io_bytes = static_cast<std::int64_t>(spec.burn_in.io_mb * 1024 * 1024);
  req.compute_s = spec.burn_in.compute_s;
  req.gpu = gpu_probe_options(spec);
  // DCGM's diagnostic and the torch probe take their own time on top of the round's.
  req.timeout_s = spec.burn_in.timeout_s + gpu_probe_extra_s(req.gpu);
  return req;
}

// ---- burn-in ----------------------------------------------------------------------------

Result<void> HealthJudge::start_burn_in(ClusterRow& cluster, const std::string& why) {
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

Result<BrainReply> HealthJudge::on(const StartBurnIn& e) {
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
  if (c.admission == Admission::pending_delivery) {
    return make_error(ErrorKind::conflict, "cluster " + c.name +
                                               " is not delivered yet; it burns in once its site "
                                               "lists its nodes");
  }
  if (c.admission == Admission::draining || c.admission == Admission::retired) {
    return make_error(ErrorKind::conflict,
                      "cluster " + c.name + " is " + std::string(to_string(c.admission)) +
                          "; a burn-in would admit it again (activate it first)");
  }
  if (auto r = start_burn_in(c, "requested"); !r) return r.error();
  return BrainReply{0, std::string(to_string(c.admission))};
}

Result<void> HealthJudge::start_due_burn_ins() {
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

Result<BrainReply> HealthJudge::on(const ProbeCompleted& e) {
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
  return BrainReply{};
}

Result<void> HealthJudge::judge_burn_in_round(ClusterRow& c, const ProbeCompleted& e) {
  const Millis now = clock_.now_ms();
  const ClusterSpec* spec = cluster_spec(c.name);
  auto known = store_.nodes(c.name);
  if (!known) return known.error();
  c.burn_in_token.clear();
  if (!e.result.ok()) {
    const Error& err = e.result.error();
    // A provider that cannot probe would keep the cluster out of service forever: admit it and
    // say so. Any other failure is the site's, not the nodes': try again in a while.
    // A person may have drained or retired it meanwhile: that stands.
    if (c.admission == Admission::burn_in) {
      c.admission = err.kind == ErrorKind::unsupported ? Admission::active : Admission::pending;
    }
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
  policy.torch.min_tflops_ratio = spec->burn_in.gpu.min_tflops_ratio;
  policy.torch.min_datasheet_ratio = spec->burn_in.gpu.min_datasheet_ratio;
  policy.torch.peak_flops = spec->peak_flops_per_gpu();  // the datasheet, on CUDA only
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
    NodeDecision d = after_probe(health_of(n), false, v.reason, now, quarantine_policy(spec));
    if (d.to) {
      if (auto r = set_standing(n, *d.to, d.reason, true); !r) return r;
    }
  }
  // The fabric step, when the cluster has one, comes next: the cluster waits for it.
  auto fabric = start_fabric_step(c, verdicts);
  if (!fabric) return fabric.error();
  if (c.admission == Admission::burn_in && !*fabric) c.admission = Admission::active;
  if (auto r = store_.update_cluster(c); !r) return r;
  return store_.add_event(std::nullopt, std::nullopt, now, "burn-in",
                          "burn-in of " + c.name + (*fabric ? " probes" : "") +
                              " done: " + std::to_string(verdicts.size() - failed) + " of " +
                              std::to_string(verdicts.size()) + " node(s) passed");
}

Result<void> HealthJudge::start_release_probes() {
  const Millis now = clock_.now_ms();
  for (const auto& spec : clusters_) {
    // Only a quarantined node is ever due (release_probe_due): read those, not every node.
    auto nodes = store_.quarantined_nodes(spec.name);
    if (!nodes) return nodes.error();
    const QuarantinePolicy policy = quarantine_policy(&spec);
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

Result<NodeProbeVerdict> HealthJudge::judge_spare_burn_in(const ProbeCompleted& e,
                                                          const std::string& node) {
  const Millis now = clock_.now_ms();
  if (!e.result.ok()) {
    return NodeProbeVerdict{node, false, "probe round failed: " + e.result.error().message, 0, 0};
  }
  // One node has no median to be compared with: its own checks decide.
  NodeProbeVerdict v = judge_burn_in({node}, *e.result, BurnInPolicy{0, 0}).front();
  if (auto r = store_.add_probe(probe_row(e.cluster, e, v, now)); !r) return r.error();
  if (auto r = node_event(e.cluster, node, v.passed ? "probe-passed" : "probe-failed",
                          "hot spare burn-in: " + v.reason);
      !r) {
    return r.error();
  }
  if (v.passed) return v;
  auto found = store_.node(e.cluster, node);
  if (!found) return found.error();
  if (!*found) return v;
  NodeRow n = **found;
  NodeDecision d =
      after_probe(health_of(n), false, v.reason, now, quarantine_policy(cluster_spec(e.cluster)));
  if (d.to) {
    if (auto r = set_standing(n, *d.to, d.reason, true); !r) return r.error();
  }
  return v;
}

Result<void> HealthJudge::judge_release_round(const ProbeCompleted& e) {
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
    // A lemon by rate is retired though its probe passed: it fails under work, not in probes.
    auto rate = node_rate_verdict(store_, e.cluster, v.node, now);
    if (!rate) return rate.error();
    NodeDecision d =
        after_release_probe(health_of(n), v.passed, v.reason, *rate, now, quarantine_policy(spec));
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

}  // namespace orch
