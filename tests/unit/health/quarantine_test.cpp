// Quarantine rules for one node: failures in a window, cooldown and release probe, retirement.
#include "scheduler/health/quarantine.h"

#include <gmock/gmock.h>

namespace orch {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

constexpr Millis kHour = 3600LL * 1000;
constexpr Millis kDay = 24 * kHour;
constexpr Millis kT0 = 1'700'000'000'000;

TEST(Quarantine, FailureKindsAreTheOnesImplicatingTheNode) {
  for (const char* k :
       {"node-unhealthy", "node-failure", "gpu-error", "probe-failed", "mfu-outlier", "hang"}) {
    EXPECT_TRUE(is_failure_kind(k)) << k;
  }
  EXPECT_FALSE(is_failure_kind("released"));
  EXPECT_FALSE(is_failure_kind("probe-passed"));
  EXPECT_FALSE(is_failure_kind(""));
}

TEST(Quarantine, TwoFailuresWithinSevenDaysQuarantine) {
  QuarantinePolicy policy;
  NodeHealth node;
  NodeDecision first = after_failure(node, {kT0}, kT0, policy);
  EXPECT_EQ(first.to, std::nullopt);
  EXPECT_EQ(first.reason, "1 failure within 7 days");
  const Millis now = kT0 + 6 * kDay;
  NodeDecision second = after_failure(node, {now, kT0}, now, policy);
  EXPECT_THAT(second.to, Optional(NodeState::quarantined));
  EXPECT_EQ(second.reason, "2 failures within 7 days");
}

TEST(Quarantine, TwoFailuresEightDaysApartDoNot) {
  QuarantinePolicy policy;
  const Millis now = kT0 + 8 * kDay;
  NodeDecision d = after_failure({}, {kT0, now}, now, policy);
  EXPECT_EQ(d.to, std::nullopt);
  EXPECT_EQ(d.reason, "1 failure within 7 days");
  // Exactly at the window's edge still counts.
  const Millis edge = kT0 + 7 * kDay;
  EXPECT_THAT(after_failure({}, {kT0, edge}, edge, policy).to, Optional(NodeState::quarantined));
}

TEST(Quarantine, CooldownThenPassingProbeReleases) {
  QuarantinePolicy policy;
  NodeHealth node{NodeState::quarantined, 1, kT0};
  EXPECT_FALSE(release_probe_due(node, kT0 + 59 * 60 * 1000, policy));
  NodeDecision early = after_probe(node, true, "", kT0 + 30 * 60 * 1000, policy);
  EXPECT_EQ(early.to, std::nullopt);
  EXPECT_EQ(early.reason, "probe passed but the cooldown of 1 hour is not over");
  EXPECT_TRUE(release_probe_due(node, kT0 + kHour, policy));
  NodeDecision late = after_probe(node, true, "all checks passed", kT0 + kHour, policy);
  EXPECT_THAT(late.to, Optional(NodeState::active));
  EXPECT_EQ(late.reason, "release probe passed: all checks passed");
}

TEST(Quarantine, FailingProbeKeepsAQuarantinedNodeOut) {
  QuarantinePolicy policy;
  NodeHealth node{NodeState::quarantined, 1, kT0};
  NodeDecision d = after_probe(node, false, "failed checks: xid", kT0 + 2 * kHour, policy);
  EXPECT_EQ(d.to, std::nullopt);
  EXPECT_EQ(d.reason, "release probe failed: failed checks: xid");
  // More failures while quarantined change nothing either.
  EXPECT_EQ(after_failure(node, {kT0, kT0 + 1, kT0 + 2}, kT0 + 3, policy).to, std::nullopt);
}

TEST(Quarantine, FailedBurnInProbeQuarantinesAnActiveNodeAtOnce) {
  QuarantinePolicy policy;
  NodeDecision d = after_probe({}, false, "compute 41% of the cluster median", kT0, policy);
  EXPECT_THAT(d.to, Optional(NodeState::quarantined));
  EXPECT_EQ(d.reason, "probe failed: compute 41% of the cluster median");
  EXPECT_EQ(after_probe({}, true, "", kT0, policy).to, std::nullopt);
}

TEST(Quarantine, ThirdQuarantineRetires) {
  QuarantinePolicy policy;
  NodeHealth twice{NodeState::active, 2, std::nullopt};
  NodeDecision d = after_failure(twice, {kT0, kT0 + kHour}, kT0 + kHour, policy);
  EXPECT_THAT(d.to, Optional(NodeState::retired));
  EXPECT_EQ(d.reason,
            "2 failures within 7 days; 3rd quarantine, retired until a person releases it");
  NodeDecision probe = after_probe(twice, false, "xid", kT0, policy);
  EXPECT_THAT(probe.to, Optional(NodeState::retired));
  EXPECT_THAT(probe.reason, HasSubstr("probe failed: xid; 3rd quarantine"));
  NodeHealth once{NodeState::active, 1, std::nullopt};
  EXPECT_THAT(after_failure(once, {kT0, kT0 + 1}, kT0 + 1, policy).to,
              Optional(NodeState::quarantined));
}

TEST(Quarantine, RetiredStaysRetired) {
  QuarantinePolicy policy;
  NodeHealth retired{NodeState::retired, 3, kT0};
  EXPECT_EQ(after_failure(retired, {kT0, kT0 + 1}, kT0 + 1, policy).to, std::nullopt);
  EXPECT_EQ(after_probe(retired, true, "", kT0 + 10 * kDay, policy).to, std::nullopt);
  EXPECT_EQ(after_probe(retired, false, "", kT0 + 10 * kDay, policy).to, std::nullopt);
  EXPECT_FALSE(release_probe_due(retired, kT0 + 10 * kDay, policy));
  EXPECT_EQ(after_failure(retired, {}, kT0, policy).reason, "retired; only a person releases it");
}

TEST(Quarantine, PolicyWindowIsDescribedInItsOwnUnit) {
  QuarantinePolicy policy;
  policy.window_ms = 12 * kHour;
  policy.failures_to_quarantine = 3;
  EXPECT_EQ(after_failure({}, {kT0, kT0 + 1}, kT0 + 1, policy).reason,
            "2 failures within 12 hours");
}

TEST(Quarantine, OutlookSaysWhatTheNextFailureDoes) {
  QuarantinePolicy policy;
  policy.failures_to_quarantine = 3;
  NodeOutlook fresh = node_outlook({}, 0, policy);
  EXPECT_EQ(fresh.failures, 0);
  EXPECT_EQ(fresh.needed, 3);
  EXPECT_EQ(fresh.next, "3 more failures within 7 days quarantine it");
  EXPECT_EQ(node_outlook({}, 2, policy).next, "the next failure quarantines it");
  NodeHealth twice{NodeState::active, 2, std::nullopt};  // retire_after is 3
  EXPECT_EQ(node_outlook(twice, 2, policy).next,
            "the next failure retires it (its 3rd quarantine)");
  NodeHealth out{NodeState::quarantined, 1, kT0};
  EXPECT_EQ(node_outlook(out, 2, policy).next,
            "quarantined: a passing release probe after the cooldown of 1 hour returns it");
  EXPECT_EQ(node_outlook({NodeState::retired, 3, kT0}, 0, policy).next,
            "retired: only a person releases it");
}

}  // namespace
}  // namespace orch
