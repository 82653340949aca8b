// Lemons judged by rate (node_rate.h): a node's failures under work against its exposure and its
// peers' pooled rate, and how that verdict and the count rule decide a node's standing.
#include "scheduler/health/node_rate.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace orch {
namespace {

// Two significant digits, never in exponent form: 0.0016, 0.000038, 12.
std::string two_digits(double v) {
  if (!(v > 0)) return "0";
  const int decimals = std::max(0, 1 - static_cast<int>(std::floor(std::log10(v))));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string whole(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  std::string s = buf;
  for (int i = static_cast<int>(s.size()) - 3; i > 0 && std::isdigit(s[i - 1]); i -= 3) {
    s.insert(static_cast<std::size_t>(i), ",");
  }
  return s;
}

}  // namespace

bool is_rate_failure_kind(std::string_view kind) {
  static constexpr std::array<std::string_view, 4> kinds = {"node-failure", "gpu-error",
                                                            "gpu-fault", "hang"};
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

double poisson_tail(int k, double mu) {
  if (k <= 0) return 1.0;
  if (!(mu > 0)) return 0.0;
  // Below the mean, 1 minus the lower terms; above it, the upper terms (no cancellation there).
  double term = std::exp(-mu);
  if (k <= mu) {
    double lower = 0;
    for (int i = 0; i < k; ++i) {
      lower += term;
      term *= mu / (i + 1);
    }
    return std::clamp(1.0 - lower, 0.0, 1.0);
  }
  for (int i = 1; i <= k; ++i) term *= mu / i;  // P(X = k)
  double upper = 0;
  for (int i = k; i < k + 10'000 && term > upper * 1e-17; ++i) {
    upper += term;
    term *= mu / (i + 1);
  }
  return std::clamp(upper, 0.0, 1.0);
}

RateVerdict judge_rate(const RateEvidence& e, const RatePolicy& policy) {
  RateVerdict v;
  const double gpus = std::max(1, e.gpus_per_node);
  const double prior_failures = policy.prior_node_hours / policy.prior_node_mtbf_h;
  v.peer_rate = (e.peer_failures + prior_failures) /
                (std::max(0.0, e.peer_gpu_hours) + policy.prior_node_hours * gpus);
  const double exposure = std::max(0.0, e.gpu_hours);
  v.gpu_hours = exposure;
  if (exposure > 0) {
    v.rate = e.failures / exposure;
    v.ratio = v.rate / v.peer_rate;
  }
  v.p_value = poisson_tail(e.failures, v.peer_rate * exposure);
  v.peers_measured = e.peer_gpu_hours >= policy.min_peer_node_hours * gpus;
  v.lemon = v.peers_measured && e.failures >= policy.min_failures && v.p_value < policy.max_p &&
            (exposure <= 0 || v.ratio >= policy.min_ratio);
  v.evidence = std::to_string(e.failures) + " failure" + (e.failures == 1 ? "" : "s") + " in " +
               whole(exposure) + " GPU-hours";
  if (exposure > 0) v.evidence += ": " + two_digits(v.ratio) + "x";
  v.evidence += exposure > 0 ? " its cluster's rate (" : ": its cluster's rate is ";
  v.evidence += two_digits(v.peer_rate) + "/GPU-h" + (exposure > 0 ? ")" : "");
  if (!v.peers_measured) v.evidence += ", its peers too little run to compare with";
  const int room = std::max(
      1, static_cast<int>(policy.max_retired_share * static_cast<double>(e.cluster_nodes)));
  if (v.lemon && e.cluster_nodes > 0 && e.retired_nodes >= room) {
    v.lemon = false;
    v.evidence += "; a lemon, but " + std::to_string(e.retired_nodes) + " of its cluster's " +
                  std::to_string(e.cluster_nodes) +
                  " nodes are retired already (the rate rule retires at most " +
                  whole(policy.max_retired_share * 100) + "%)";
  }
  return v;
}

bool count_rule_applies(double peer_rate, int gpus_per_node, const QuarantinePolicy& quarantine,
                        const RatePolicy& policy) {
  const double window_h = static_cast<double>(quarantine.window_ms) / 3'600'000.0;
  const double mu = peer_rate * std::max(1, gpus_per_node) * window_h;
  return poisson_tail(quarantine.failures_to_quarantine, mu) < policy.count_rule_max_p;
}

NodeDecision after_failure_by_rate(const NodeHealth& node, const RateVerdict& rate, bool count_rule,
                                   const std::vector<Millis>& failure_times_ms, Millis now,
                                   const QuarantinePolicy& policy) {
  if (node.state == NodeState::retired) return {std::nullopt, "retired; only a person releases it"};
  if (rate.lemon) {
    return {NodeState::retired, rate.evidence + "; retired as a lemon until a person releases it"};
  }
  NodeDecision d = after_failure(node, failure_times_ms, now, policy);
  if (d.to && !count_rule) {
    return {std::nullopt, d.reason + ", but at its cluster's rate (" + rate.evidence +
                              ") that many is luck: the count rule is off there"};
  }
  return d;
}

NodeDecision after_release_probe(const NodeHealth& node, bool passed, const std::string& why,
                                 const RateVerdict& rate, Millis now,
                                 const QuarantinePolicy& policy) {
  NodeDecision d = after_probe(node, passed, why, now, policy);
  if (d.to == NodeState::active && rate.lemon) {
    return {NodeState::retired, "release probe passed, but " + rate.evidence +
                                    "; retired as a lemon until a person releases it"};
  }
  return d;
}

}  // namespace orch
