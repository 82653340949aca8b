// Lemons judged by rate (issue 43): a node's failures under work against its exposure and its
// peers' rate, with the numbers worked by hand. The prior adds 50/2000 = 0.025 failures and
// 50 node-hours (400 GPU-hours at 8 GPUs) to the peers.
#include "scheduler/health/node_rate.h"

#include <gmock/gmock.h>

namespace orch {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

constexpr Millis kHour = 3600LL * 1000;
constexpr Millis kT0 = 1'700'000'000'000;

// Peers: 9 failures in 100,000 GPU-hours, so (9 + 0.025) / (100,000 + 400) = 8.989e-5/GPU-h.
RateEvidence among_healthy_peers(int failures, double gpu_hours) {
  return {failures, gpu_hours, 9, 100'000, 8};
}

TEST(NodeRate, PoissonTailIsOneMinusTheLowerTermsAndTheUpperTermsAboveTheMean) {
  EXPECT_DOUBLE_EQ(poisson_tail(0, 3.0), 1.0);
  EXPECT_DOUBLE_EQ(poisson_tail(1, 0.0), 0.0);
  // 1 - e^-0.1 (1 + 0.1) = 0.0046788
  EXPECT_NEAR(poisson_tail(2, 0.1), 0.0046788, 1e-7);
  // 1 - e^-5 (1 + 5 + 12.5) = 0.875348
  EXPECT_NEAR(poisson_tail(3, 5.0), 0.875348, 1e-6);
  // Far in the tail the terms are summed, not subtracted from 1: e^-0.01 0.01^4 / 24 (1 + ...)
  EXPECT_NEAR(poisson_tail(4, 0.01), 4.1335e-10, 1e-13);
}

TEST(NodeRate, ThreeFailuresInTwoThousandGpuHoursAmongHealthyPeersIsALemon) {
  // rate 3 / 2,000 = 0.0015, 16.7x 8.989e-5; mu = 0.1798, P(X >= 3) = 0.00085 < 0.01.
  RateVerdict v = judge_rate(among_healthy_peers(3, 2'000));
  EXPECT_NEAR(v.peer_rate, 9.025 / 100'400, 1e-12);
  EXPECT_NEAR(v.rate, 0.0015, 1e-12);
  EXPECT_NEAR(v.ratio, 16.69, 0.01);
  EXPECT_NEAR(v.p_value, 0.000847, 0.00001);
  EXPECT_TRUE(v.lemon);
  EXPECT_EQ(v.evidence, "3 failures in 2,000 GPU-hours: 17x its cluster's rate (0.000090/GPU-h)");
}

TEST(NodeRate, TwoFailuresInTwoThousandGpuHoursAreStillLuckAtOnePercent) {
  // 11x the peers' rate, but mu = 0.1798 and P(X >= 2) = 1 - e^-mu (1 + mu) = 0.0143 >= 0.01.
  RateVerdict v = judge_rate(among_healthy_peers(2, 2'000));
  EXPECT_NEAR(v.ratio, 11.12, 0.01);
  EXPECT_NEAR(v.p_value, 0.0143, 0.0001);
  EXPECT_FALSE(v.lemon);
  // Within 1,000 GPU-hours they are not: mu = 0.0899, P(X >= 2) = 0.0038.
  EXPECT_TRUE(judge_rate(among_healthy_peers(2, 1'000)).lemon);
}

TEST(NodeRate, ALemonIsNotRetiredOnceFivePercentOfItsClusterIsRetired) {
  // The same 17x lemon in a cluster of 40 nodes: 5% of 40 is 2 nodes.
  RateEvidence e = among_healthy_peers(3, 2'000);
  e.cluster_nodes = 40;
  e.retired_nodes = 1;
  EXPECT_TRUE(judge_rate(e).lemon);
  e.retired_nodes = 2;
  RateVerdict full = judge_rate(e);
  EXPECT_FALSE(full.lemon);
  EXPECT_THAT(full.evidence,
              HasSubstr("a lemon, but 2 of its cluster's 40 nodes are retired already (the rate "
                        "rule retires at most 5%)"));
  // A small cluster may always retire one.
  e.cluster_nodes = 4;
  e.retired_nodes = 0;
  EXPECT_TRUE(judge_rate(e).lemon);
  e.retired_nodes = 1;
  EXPECT_FALSE(judge_rate(e).lemon);
}

TEST(NodeRate, OneFailureIsNeverALemonHoweverShortTheExposure) {
  RateVerdict v = judge_rate(among_healthy_peers(1, 1.0));
  EXPECT_GT(v.ratio, 100);
  EXPECT_FALSE(v.lemon);
}

TEST(NodeRate, ANodeIsComparedWithItsPeersOnlyOnceTheyHaveRunFiveHundredNodeHours) {
  // Two failures in an hour against peers that ran 3,999 GPU-hours (under 500 x 8): the prior
  // would be the judge. At 4,000 they are measured, and the node is a lemon.
  RateVerdict early = judge_rate({2, 8, 0, 3'999, 8});
  EXPECT_FALSE(early.peers_measured);
  EXPECT_FALSE(early.lemon);
  EXPECT_THAT(early.evidence, HasSubstr("its peers too little run to compare with"));
  EXPECT_TRUE(judge_rate({2, 8, 0, 4'000, 8}).lemon);
}

TEST(NodeRate, ANodeOfAUniformlyFlakyClusterIsNoLemon) {
  // 29 peers of MTBF 96 h ran 500 h each: 116,000 GPU-hours, 151 failures; peer rate
  // 151.025 / 116,400 = 0.00130. Eight failures in 4,000 GPU-hours is 1.5x: luck, not a lemon.
  RateVerdict v = judge_rate({8, 4'000, 151, 116'000, 8});
  EXPECT_NEAR(v.peer_rate, 0.0012975, 1e-7);
  EXPECT_NEAR(v.ratio, 1.541, 0.001);
  EXPECT_FALSE(v.lemon);
  // Fourteen is 2.7x and unlikely at the peers' rate (P(X >= 14 | 5.2) < 0.01), but not several
  // times worse.
  EXPECT_FALSE(judge_rate({14, 4'000, 151, 116'000, 8}).lemon);
}

TEST(NodeRate, TheCountRuleAppliesOnlyWhereItsCountIsEvidence) {
  QuarantinePolicy policy;  // 2 failures within 168 h
  // Node MTBF 6,335 h: mu = 168 / 6,335 = 0.0265 in a window, P(X >= 2) = 0.00035.
  EXPECT_TRUE(count_rule_applies(1.0 / (6335 * 8), 8, policy));
  // Node MTBF 96 h: mu = 1.75, P(X >= 2) = 0.52: every node would meet it.
  EXPECT_FALSE(count_rule_applies(1.0 / (96 * 8), 8, policy));
  // The edge at 1%: mu = 0.1486 (MTBF 1,131 h) applies no more; MTBF 1,200 h still does.
  EXPECT_FALSE(count_rule_applies(1.0 / (1'100 * 8), 8, policy));
  EXPECT_TRUE(count_rule_applies(1.0 / (1'200 * 8), 8, policy));
}

TEST(NodeRate, ALemonIsRetiredAtItsFailureWhateverTheCountRuleSays) {
  QuarantinePolicy policy;
  NodeHealth node;
  RateVerdict lemon = judge_rate(among_healthy_peers(3, 2'000));
  NodeDecision d = after_failure_by_rate(node, lemon, false, {kT0}, kT0, policy);
  EXPECT_THAT(d.to, Optional(NodeState::retired));
  EXPECT_THAT(d.reason, HasSubstr("17x its cluster's rate"));
  EXPECT_THAT(d.reason, HasSubstr("retired as a lemon"));
  // A quarantined one too: its quarantine is no longer the question.
  node.state = NodeState::quarantined;
  EXPECT_THAT(after_failure_by_rate(node, lemon, true, {kT0}, kT0, policy).to,
              Optional(NodeState::retired));
}

TEST(NodeRate, TwoFailuresInAWeekQuarantineOnlyWhereTheCountRuleApplies) {
  QuarantinePolicy policy;
  NodeHealth node;
  RateVerdict luck = judge_rate({2, 8'000, 151, 116'000, 8});
  ASSERT_FALSE(luck.lemon);
  const std::vector<Millis> two = {kT0, kT0 + 24 * kHour};
  const Millis now = kT0 + 24 * kHour;
  EXPECT_THAT(after_failure_by_rate(node, luck, true, two, now, policy).to,
              Optional(NodeState::quarantined));
  NodeDecision off = after_failure_by_rate(node, luck, false, two, now, policy);
  EXPECT_EQ(off.to, std::nullopt);
  EXPECT_THAT(off.reason, HasSubstr("the count rule is off there"));
}

TEST(NodeRate, ALemonPassingItsReleaseProbeIsRetiredNotReleased) {
  QuarantinePolicy policy;  // cooldown 1 h
  NodeHealth node{NodeState::quarantined, 1, kT0};
  const Millis later = kT0 + 2 * kHour;
  RateVerdict lemon = judge_rate(among_healthy_peers(3, 2'000));
  NodeDecision d = after_release_probe(node, true, "all checks passed", lemon, later, policy);
  EXPECT_THAT(d.to, Optional(NodeState::retired));
  EXPECT_THAT(d.reason, HasSubstr("release probe passed, but 3 failures in 2,000 GPU-hours"));
  // A node that is no lemon is released as before; a failed probe keeps either one out.
  RateVerdict fine = judge_rate(among_healthy_peers(1, 2'000));
  EXPECT_THAT(after_release_probe(node, true, "", fine, later, policy).to,
              Optional(NodeState::active));
  EXPECT_EQ(after_release_probe(node, false, "ecc", lemon, later, policy).to, std::nullopt);
}

TEST(NodeRate, OnlyFailuresUnderWorkAreWeighedAgainstExposure) {
  for (const char* k : {"node-failure", "gpu-error", "gpu-fault", "hang"}) {
    EXPECT_TRUE(is_rate_failure_kind(k)) << k;
  }
  for (const char* k : {"node-unhealthy", "probe-failed", "mfu-outlier", "hang-seen"}) {
    EXPECT_FALSE(is_rate_failure_kind(k)) << k;
  }
}

}  // namespace
}  // namespace orch
