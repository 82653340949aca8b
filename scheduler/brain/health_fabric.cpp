// The brain's health part: burn-in's fabric step (issue 43). After the probe round, the nodes
// that passed run all-reduce pair by pair (scheduler/health/fabric.h) through one outbox probe
// action whose payload is a fabric step: the site worker runs its rounds on its own thread, so
// the brain's tick never waits for them. A node whose every pairing is slow is quarantined with
// its figures, a pair slow alone is recorded on both nodes' ledgers (`fabric-slow-pair`, which
// the quarantine rule does not count: the link is at fault, and which node's port it is no
// probe can say) and in the cluster's events; then the cluster is admitted.
#include <algorithm>
#include <cstdio>
#include <map>

#include "scheduler/brain/brain_text.h"
#include "scheduler/brain/health_judge.h"
#include "scheduler/brain/node_standing.h"
#include "scheduler/health/fabric.h"

namespace orch {
namespace {

// One node's pairs as the probe row keeps them (`raw`).
std::string pairs_json(const std::string& node, const std::vector<FabricPairResult>& pairs) {
  std::vector<FabricPairResult> mine;
  for (const auto& p : pairs) {
    if (p.a == node || p.b == node) mine.push_back(p);
  }
  return nlohmann::json{{"fabric", fabric_results_to_json(mine)}}.dump();
}

std::string one_decimal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

}  // namespace

Result<bool> HealthJudge::start_fabric_step(ClusterRow& c,
                                            const std::vector<NodeProbeVerdict>& verdicts) {
  const ClusterSpec* spec = cluster_spec(c.name);
  if (!spec || !spec->burn_in.fabric.enabled()) return false;
  std::vector<std::string> passed;
  for (const auto& v : verdicts) {
    if (v.passed) passed.push_back(v.node);
  }
  if (passed.size() < 2) return false;
  const FabricSpec& f = spec->burn_in.fabric;
  const Millis now = clock_.now_ms();
  FabricStep step;
  step.token = "orch-fabric-" + c.name + "-" + brain_text::base36(static_cast<std::uint64_t>(now));
  step.rounds = fabric_schedule(passed, f.rounds);
  step.all_reduce_perf = f.all_reduce_perf;
  step.bytes = f.bytes;
  step.gpus_per_node = f.gpus_per_node > 0 ? f.gpus_per_node : spec->gpus_per_node;
  step.timeout_s = f.timeout_s;
  OutboxRow row;
  row.cluster = c.name;
  row.kind = ActionKind::probe;
  row.token = step.token;
  row.payload = fabric_step_to_json(step);
  row.created_ms = now;
  if (auto r = store_.enqueue(row); !r) return r.error();
  c.burn_in_token = step.token;
  if (auto r = store_.add_event(std::nullopt, std::nullopt, now, "burn-in",
                                "burn-in of " + c.name + ": fabric step " + step.token + ", " +
                                    std::to_string(step.rounds.size()) +
                                    " round(s) of node pairs among " +
                                    std::to_string(passed.size()) + " node(s) that passed");
      !r) {
    return r.error();
  }
  return true;
}

Result<BrainReply> HealthJudge::on(const FabricCompleted& e) {
  if (auto r = store_.mark_action_done(e.outbox_id, clock_.now_ms()); !r) return r.error();
  auto row = store_.cluster(e.cluster);
  if (!row) return row.error();
  if (!*row || !cluster_spec(e.cluster) || (*row)->burn_in_token != e.token) return BrainReply{};
  ClusterRow c = **row;
  c.burn_in_token.clear();
  if (e.result.ok()) {
    if (auto r = judge_fabric_step(c, *e.result, e.token); !r) return r.error();
  } else if (auto r = store_.add_event(std::nullopt, std::nullopt, clock_.now_ms(), "burn-in",
                                       "burn-in of " + c.name +
                                           ": the fabric step failed: " + e.result.error().message +
                                           "; the cluster is admitted without it");
             !r) {
    return r.error();
  }
  // A person may have drained or retired it meanwhile: that stands.
  if (c.admission == Admission::burn_in) c.admission = Admission::active;
  if (auto r = store_.update_cluster(c); !r) return r.error();
  return BrainReply{};
}

Result<void> HealthJudge::judge_fabric_step(ClusterRow& c,
                                            const std::vector<FabricPairResult>& pairs,
                                            const std::string& token) {
  const Millis now = clock_.now_ms();
  const ClusterSpec* spec = cluster_spec(c.name);
  std::vector<std::string> nodes;
  for (const auto& p : pairs) {
    for (const auto* n : {&p.a, &p.b}) {
      if (std::find(nodes.begin(), nodes.end(), *n) == nodes.end()) nodes.push_back(*n);
    }
  }
  const FabricVerdict verdict =
      judge_fabric(nodes, pairs, FabricPolicy{spec->burn_in.fabric.min_busbw_ratio});
  std::map<std::string, std::string> slow_pair_of;
  for (const auto& sp : verdict.slow_pairs) {
    for (const auto& n : {sp.a, sp.b}) {
      slow_pair_of[n] += (slow_pair_of[n].empty() ? "" : "; ") + sp.reason;
      if (auto r =
              node_event(c.name, n, "fabric-slow-pair", "burn-in fabric: slow pair " + sp.reason);
          !r) {
        return r;
      }
    }
    if (auto r = store_.add_event(std::nullopt, std::nullopt, now, "burn-in",
                                  "burn-in of " + c.name + ": slow pair " + sp.reason);
        !r) {
      return r;
    }
  }
  int failed = 0;
  for (const auto& v : verdict.nodes) {
    std::string reason = v.reason;
    if (slow_pair_of.count(v.node)) reason += "; slow pair " + slow_pair_of[v.node];
    ProbeRow p{0,
               c.name,
               v.node,
               token,
               now,
               v.passed,
               reason,
               std::nullopt,
               std::nullopt,
               std::nullopt,
               pairs_json(v.node, pairs)};
    if (auto r = store_.add_probe(p); !r) return r;
    if (v.passed) continue;
    ++failed;
    if (auto r = node_event(c.name, v.node, "probe-failed", "burn-in " + reason); !r) return r;
    auto node = store_.node(c.name, v.node);
    if (!node) return node.error();
    if (!*node) continue;
    NodeRow n = **node;
    NodeDecision d = after_probe(health_of(n), false, reason, now, quarantine_policy(spec));
    if (d.to) {
      if (auto r = set_standing(n, *d.to, d.reason, true); !r) return r;
    }
  }
  return store_.add_event(
      std::nullopt, std::nullopt, now, "burn-in",
      "burn-in of " + c.name + " fabric step done: " + std::to_string(nodes.size() - failed) +
          " of " + std::to_string(nodes.size()) + " node(s) passed, " +
          std::to_string(verdict.slow_pairs.size()) + " slow pair(s)" +
          (verdict.median_gb_s ? ", median pair " + one_decimal(*verdict.median_gb_s) + " GB/s"
                               : ""));
}

}  // namespace orch
