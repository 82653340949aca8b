#pragma once
// Lemons judged by rate (issue 43), pure: a node's failures under work weighed against its
// exposure (the GPU-hours it ran work) and against its peers' pooled rate (the rest of its
// cluster, with a weak prior so that a cluster with no history is not a rate of zero).
//
//   lemon  <=>  its peers ran >= min_peer_node_hours
//           and  failures >= min_failures
//           and  failures / exposure >= min_ratio x the peers' rate            (several times
//           worse) and  P(X >= failures | X ~ Poisson(peers' rate x exposure)) < max_p (not luck)
//
// A lemon is retired, not quarantined: the release probe alone no longer clears it (a lemon
// passes probes; it fails under work). The count rule of quarantine.h counts failures in a
// window whatever the cluster's base rate; in a uniformly flaky cluster every node meets it, so
// it applies only where meeting it is itself evidence (count_rule_applies).

#include <string>
#include <string_view>

#include "scheduler/health/quarantine.h"

namespace orch {

struct RatePolicy {
  // "Several times worse": a 20x lemon among healthy peers is 10x its pool's rate (the pool
  // holds the lemons too); a healthy node of a uniform cluster is near 1x.
  double min_ratio = 3.0;
  int min_failures = 2;  // one failure is luck however short the exposure
  // The one-sided Poisson p-value the failures must beat. 0.01: in a uniformly flaky cluster
  // each count of failures a node reaches is a 1% chance at most (docs/health.md works the
  // numbers), and a 20x lemon among 6,335 h nodes qualifies on its 2nd failure within 480
  // node-hours, on its 3rd within 1,400.
  double max_p = 0.01;
  // The peers' rate before history: a failure per prior_node_mtbf_h node-hours (goodput.h's
  // MTBF prior), weighing as prior_node_hours of evidence: a tie-breaker for peers with no
  // failure yet, a tenth of what they must have run to be compared with. (At placement's 500 it
  // halved a small flaky cluster's rate for days and retired its healthy nodes.)
  double prior_node_mtbf_h = 2000;
  double prior_node_hours = 50;
  // Its peers must have run at least this many node-hours (of the node's GPUs) before it is
  // compared with them: until then the prior would be the judge, and a prior far from the
  // cluster's truth (a uniformly flaky one) retires healthy nodes. The count rule acts meanwhile.
  double min_peer_node_hours = 500;
  // The count rule (N failures in its window) applies while a busy node of the cluster's rate
  // meets it by luck with a probability under this: 2 failures in 168 h below a node MTBF of
  // about 1,140 h is no longer evidence.
  double count_rule_max_p = 0.01;
  // A floor under the fleet: the rate rule retires a lemon only while fewer than this share of
  // its cluster's nodes (at least one) are retired. Each judgement takes a max_p risk, and over
  // months and hundreds of nodes those risks add up: a 180-day run of the lemon fleet retired 22
  // of 272 nodes against 16 spare and starved its job (bench/RESULTS.md). Past the floor a lemon
  // is judged by the count rule and its release probe like any node, and its evidence says so.
  double max_retired_share = 0.05;
};

// Ledger kinds that are failures under work for the rate: a node lost under a job, a GPU fault
// in a job (its log's Xid, or the live watch's `gpu-fault`), a hang counted against the node.
// (Failures of an idle node, the site listing it down, count for the count rule but have no
// exposure to be weighed against.)
bool is_rate_failure_kind(std::string_view kind);

struct RateEvidence {
  int failures = 0;       // the node's failures under work, one per incident
  double gpu_hours = 0;   // its exposure: GPU-hours of attempts on it
  int peer_failures = 0;  // the same, summed over the rest of its cluster
  double peer_gpu_hours = 0;
  int gpus_per_node = 8;  // the node's GPUs (the prior and the count rule are per node)
  int cluster_nodes = 0;  // nodes of its cluster, itself included (0: no floor)
  int retired_nodes = 0;  // of them, retired now, itself excluded
};

struct RateVerdict {
  bool lemon = false;
  double gpu_hours = 0;         // its exposure, as judged
  double rate = 0;              // the node's failures per GPU-hour (0 with no exposure)
  double peer_rate = 0;         // its peers', with the prior
  double ratio = 0;             // rate / peer_rate (0 with no exposure)
  double p_value = 1;           // P(X >= failures) at the peers' rate over its exposure
  bool peers_measured = false;  // its peers ran min_peer_node_hours
  // "3 failures in 212 GPU-hours: 9.1x its cluster's rate (0.0016/GPU-h)"
  std::string evidence;
};

RateVerdict judge_rate(const RateEvidence& e, const RatePolicy& policy = {});

// P(X >= k) for X ~ Poisson(mu); 1 for k <= 0.
double poisson_tail(int k, double mu);

// Whether the count rule applies: a busy node at the peers' rate (per GPU-hour) meets it within
// its window by luck with a probability under policy.count_rule_max_p.
bool count_rule_applies(double peer_rate, int gpus_per_node, const QuarantinePolicy& quarantine,
                        const RatePolicy& policy = {});

// The decision after a failure of an active or quarantined node: a lemon is retired (from
// either state); otherwise an active node meets the count rule where it applies
// (after_failure), and a quarantined one stays.
NodeDecision after_failure_by_rate(const NodeHealth& node, const RateVerdict& rate, bool count_rule,
                                   const std::vector<Millis>& failure_times_ms, Millis now,
                                   const QuarantinePolicy& policy);

// The decision after a release probe: a lemon is retired even when the probe passed.
NodeDecision after_release_probe(const NodeHealth& node, bool passed, const std::string& why,
                                 const RateVerdict& rate, Millis now,
                                 const QuarantinePolicy& policy);

}  // namespace orch
