// The provider scorecard: every figure worked out by hand on a small history, per cluster and
// per vendor (a vendor card sums its clusters' facts).
#include "scheduler/health/scorecard.h"

#include <gmock/gmock.h>

#include "tests/harness/attempt_facts.h"

namespace orch {
namespace {

using testing::attempt_fact;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Optional;

constexpr Millis kH = 3600LL * 1000;
constexpr Millis kT0 = 1'700'000'000'000;

// 100 hours of window: alpha (acme) all of it, beta (acme) its last 50 hours, gamma (no vendor)
// with no facts at all.
ScorecardInputs history() {
  ScorecardInputs in;
  in.window_start = kT0;
  in.now = kT0 + 100 * kH;
  in.clusters = {{"alpha", "acme", kT0 - 10 * kH, 4, 1},
                 {"beta", "acme", kT0 + 50 * kH, 2, 0},
                 {"gamma", "", 0, 1, 0}};
  in.health = {
      // Down and back before the window: alpha is up when the window opens.
      {"alpha", kT0 - 1 * kH, true},
      {"alpha", kT0 - 5 * kH, false},
      // Down 2 h then 3 h inside it (given out of order on purpose).
      {"alpha", kT0 + 50 * kH, false},
      {"alpha", kT0 + 10 * kH, false},
      {"alpha", kT0 + 12 * kH, true},
      {"alpha", kT0 + 53 * kH, true},
      {"beta", kT0 + 60 * kH, false},
      {"beta", kT0 + 70 * kH, true},
      {"zeta", kT0, false},  // not a known cluster: ignored
  };
  in.attempts = {
      // alpha. Job 1 ran there twice, both ended by the infrastructure, then moved to beta.
      attempt_fact("alpha", 1, 1, 8, 2, kT0 - 10 * kH, kT0 + 20 * kH, ExitCause::node_lost, 0.40,
                   kT0 - 9 * kH),
      attempt_fact("alpha", 1, 2, 8, 2, kT0 + 20 * kH, kT0 + 60 * kH, ExitCause::gpu_error, 0.30,
                   kT0 + 20 * kH + 600'000),
      attempt_fact("alpha", 2, 1, 4, 1, kT0 + 90 * kH, std::nullopt, ExitCause::none, 0.50),
      attempt_fact("alpha", 3, 1, 4, 1, kT0 + 30 * kH, kT0 + 40 * kH, ExitCause::time_limit),
      // Ended before the window: ignored everywhere.
      attempt_fact("alpha", 4, 1, 8, 2, kT0 - 20 * kH, kT0 - 15 * kH, ExitCause::node_lost, 0.9),
      // beta.
      attempt_fact("beta", 1, 3, 8, 2, kT0 + 60 * kH, kT0 + 80 * kH, ExitCause::succeeded, 0.20,
                   kT0 + 60 * kH + 1'200'000),
      attempt_fact("beta", 5, 1, 4, 1, kT0 + 55 * kH, kT0 + 65 * kH, ExitCause::preempted),
      attempt_fact("zeta", 6, 1, 64, 8, kT0, kT0 + kH, ExitCause::node_lost),
  };
  // The last signs of life of job 1's interrupted attempts: 30 s and 90 s before their verdicts.
  // Job 5's preemption has none (ended before it was recorded): no detection sample.
  in.attempts[0].last_alive_ms = kT0 + 20 * kH - 30'000;
  in.attempts[1].last_alive_ms = kT0 + 60 * kH - 90'000;
  for (int i = 1; i <= 20; ++i) in.checkpoints.push_back({"alpha", static_cast<double>(i)});
  in.checkpoints.push_back({"beta", 30});
  in.checkpoints.push_back({"beta", 10});
  in.node_failures = {{"alpha", "alpha-n0", kT0 + 20 * kH},
                      {"alpha", "alpha-n1", kT0 + 60 * kH},
                      {"alpha", "alpha-n0", kT0 - 30 * kH},  // before the window
                      {"beta", "beta-n1", kT0 + 65 * kH}};
  return in;
}

TEST(Scorecard, CardsComeOutPerClusterThenPerVendor) {
  auto cards = compute_scorecards(history());
  ASSERT_EQ(cards.size(), 4u);
  EXPECT_EQ(cards[0].name, "alpha");
  EXPECT_EQ(cards[0].kind, "cluster");
  EXPECT_THAT(cards[0].clusters, ElementsAre("alpha"));
  EXPECT_EQ(cards[2].name, "gamma");
  EXPECT_EQ(cards[3].name, "acme");
  EXPECT_EQ(cards[3].kind, "vendor");
  EXPECT_THAT(cards[3].clusters, ElementsAre("alpha", "beta"));
}

TEST(Scorecard, ClusterFiguresByHand) {
  auto cards = compute_scorecards(history());
  const Scorecard& a = cards[0];
  EXPECT_DOUBLE_EQ(a.availability, 95.0 / 100);  // down 2 h + 3 h of 100
  // 8 GPUs x 20 h (from the window's start) + 8 x 40 h + 4 x 10 h (live) + 4 x 10 h.
  EXPECT_DOUBLE_EQ(a.gpu_hours, 560);
  EXPECT_EQ(a.interruptions, 2);  // node_lost and gpu_error; time_limit is no interruption
  EXPECT_THAT(a.interruptions_per_1k_gpu_h, Optional(DoubleNear(2.0 / 560 * 1000, 1e-9)));
  // Node-hours 2 x 20 + 2 x 40 + 10 + 10 = 140, over 2 node failures in the window.
  EXPECT_THAT(a.node_mtbf_h, Optional(DoubleNear(70, 1e-9)));
  // Detection: 30 s and 90 s from the last sign of life to the verdict (p95: rank ceil(1.9)).
  EXPECT_THAT(a.detection_median_s, Optional(DoubleNear(60, 1e-9)));
  EXPECT_THAT(a.detection_p95_s, Optional(DoubleNear(90, 1e-9)));
  // Recovery: attempt 2 ran 600 s after attempt 1's verdict; attempt 3 (on beta) 1200 s after 2.
  EXPECT_THAT(a.recovery_median_s, Optional(DoubleNear(900, 1e-9)));
  EXPECT_THAT(a.recovery_p95_s, Optional(DoubleNear(1200, 1e-9)));
  // Work over time of 0.40, 0.30, 0.50 (their step times unknown: 1 s each).
  EXPECT_THAT(a.mfu, Optional(DoubleNear(0.40, 1e-12)));
  EXPECT_THAT(a.checkpoint_save_p95_s, Optional(19.0));  // rank ceil(0.95 x 20) = 19
  EXPECT_EQ(a.nodes, 4);
  EXPECT_EQ(a.quarantined_nodes, 1);
  EXPECT_DOUBLE_EQ(a.quarantined_share, 0.25);

  const Scorecard& b = cards[1];
  EXPECT_DOUBLE_EQ(b.availability, 40.0 / 50);  // observed since it joined, 10 h down
  EXPECT_DOUBLE_EQ(b.gpu_hours, 8 * 20 + 4 * 10);
  EXPECT_EQ(b.interruptions, 1);  // the preemption
  EXPECT_THAT(b.interruptions_per_1k_gpu_h, Optional(DoubleNear(5, 1e-9)));
  EXPECT_THAT(b.node_mtbf_h, Optional(DoubleNear(50, 1e-9)));
  EXPECT_EQ(b.detection_median_s, std::nullopt);  // no sign of life known before it
  EXPECT_EQ(b.recovery_median_s, std::nullopt);   // job 5 never resumed
  EXPECT_THAT(b.mfu, Optional(DoubleNear(0.20, 1e-12)));
  EXPECT_THAT(b.checkpoint_save_p95_s, Optional(30.0));
  EXPECT_DOUBLE_EQ(b.quarantined_share, 0);
}

TEST(Scorecard, AClusterWithNoFactsHasOnlyDefaults) {
  const Scorecard g = compute_scorecards(history())[2];
  EXPECT_DOUBLE_EQ(g.availability, 1.0);
  EXPECT_DOUBLE_EQ(g.gpu_hours, 0);
  EXPECT_EQ(g.interruptions, 0);
  EXPECT_EQ(g.interruptions_per_1k_gpu_h, std::nullopt);
  EXPECT_EQ(g.node_mtbf_h, std::nullopt);
  EXPECT_EQ(g.detection_median_s, std::nullopt);
  EXPECT_EQ(g.recovery_p95_s, std::nullopt);
  EXPECT_EQ(g.mfu, std::nullopt);
  EXPECT_EQ(g.checkpoint_save_p95_s, std::nullopt);
  EXPECT_EQ(g.nodes, 1);
}

TEST(Scorecard, VendorCardSumsTheFactsOfItsClusters) {
  const Scorecard v = compute_scorecards(history())[3];
  EXPECT_DOUBLE_EQ(v.availability, 135.0 / 150);  // not the mean of 0.95 and 0.8
  EXPECT_DOUBLE_EQ(v.gpu_hours, 760);
  EXPECT_EQ(v.interruptions, 3);
  EXPECT_THAT(v.interruptions_per_1k_gpu_h, Optional(DoubleNear(3.0 / 760 * 1000, 1e-9)));
  EXPECT_THAT(v.node_mtbf_h, Optional(DoubleNear(190.0 / 3, 1e-9)));
  EXPECT_THAT(v.detection_median_s, Optional(DoubleNear(60, 1e-9)));  // of 30, 90
  EXPECT_THAT(v.detection_p95_s, Optional(DoubleNear(90, 1e-9)));
  EXPECT_THAT(v.recovery_median_s, Optional(DoubleNear(900, 1e-9)));
  EXPECT_THAT(v.mfu, Optional(DoubleNear(0.35, 1e-12)));  // of 0.2, 0.3, 0.4, 0.5, 1 s each
  // 22 save times (1..20, 10, 30): rank ceil(0.95 x 22) = 21, which is 20.
  EXPECT_THAT(v.checkpoint_save_p95_s, Optional(20.0));
  EXPECT_EQ(v.nodes, 6);
  EXPECT_EQ(v.quarantined_nodes, 1);
  EXPECT_DOUBLE_EQ(v.quarantined_share, 1.0 / 6);
}

TEST(Scorecard, InterruptionsAreInfraCausesButTheTimeLimit) {
  EXPECT_TRUE(is_interruption(ExitCause::node_lost));
  EXPECT_TRUE(is_interruption(ExitCause::preempted));
  EXPECT_TRUE(is_interruption(ExitCause::hang));
  EXPECT_FALSE(is_interruption(ExitCause::time_limit));
  EXPECT_FALSE(is_interruption(ExitCause::user_error));
  EXPECT_FALSE(is_interruption(ExitCause::succeeded));
  EXPECT_FALSE(is_interruption(ExitCause::cancelled));
}

// The support record and delivery, by hand: alpha's tickets answered in 2 h and 6 h and
// resolved in 30 h; one opened before the window and resolved in it; beta delivered a day and a
// half late, gamma (no vendor) still awaited two days past its promise.
TEST(Scorecard, TicketsAndDeliveryByHand) {
  ScorecardInputs in;
  in.window_start = kT0;
  in.now = kT0 + 100 * kH;
  in.clusters = {{"alpha", "acme", kT0, 2, 0},
                 {"beta", "acme", kT0, 2, 0},
                 {"gamma", "", kT0 + 100 * kH, 1, 0}};
  in.clusters[1].promised_ms = kT0 + 10 * kH;
  in.clusters[1].delivered_ms = kT0 + 46 * kH;
  in.clusters[2].promised_ms = kT0 + 52 * kH;
  in.tickets = {
      {"alpha", kT0 + 10 * kH, kT0 + 12 * kH, kT0 + 40 * kH},  // 2 h, 30 h
      {"alpha", kT0 + 60 * kH, kT0 + 66 * kH, std::nullopt},   // 6 h, still open
      {"alpha", kT0 - 20 * kH, kT0 - 19 * kH, kT0 + 4 * kH},   // opened before: 24 h to resolve
      {"beta", kT0 + 90 * kH, std::nullopt, std::nullopt},     // not answered yet
  };
  auto cards = compute_scorecards(in);
  const Scorecard& a = cards[0];
  EXPECT_EQ(a.tickets, 2);
  EXPECT_EQ(a.open_tickets, 1);
  EXPECT_THAT(a.ticket_response_median_h, Optional(DoubleNear(4, 1e-9)));     // of 2, 6
  EXPECT_THAT(a.ticket_resolution_median_h, Optional(DoubleNear(27, 1e-9)));  // of 30, 24
  EXPECT_EQ(a.delivery_delay_days, std::nullopt);
  const Scorecard& b = cards[1];
  EXPECT_EQ(b.tickets, 1);
  EXPECT_EQ(b.open_tickets, 1);
  EXPECT_EQ(b.ticket_response_median_h, std::nullopt);
  EXPECT_THAT(b.delivery_delay_days, Optional(DoubleNear(1.5, 1e-9)));
  EXPECT_FALSE(b.awaiting_delivery);
  const Scorecard& g = cards[2];
  EXPECT_THAT(g.delivery_delay_days, Optional(DoubleNear(2, 1e-9)));
  EXPECT_TRUE(g.awaiting_delivery);
  const Scorecard& acme = cards[3];
  EXPECT_EQ(acme.tickets, 3);
  EXPECT_EQ(acme.open_tickets, 2);
  EXPECT_THAT(acme.delivery_delay_days, Optional(DoubleNear(1.5, 1e-9)));
}

}  // namespace
}  // namespace orch

namespace orch {
namespace {

// Two interruptions of one job on alpha: the first waited a 30 s backoff, was running 10 s after
// its placement and printed 50 s later; the second was placed 1 s after its verdict with no
// backoff and ran 4 s later, with no progress line yet.
TEST(Scorecard, TheRecoverysPartsAreMediansOfEachInterruptionThatReachedThem) {
  ScorecardInputs in;
  in.window_start = kT0;
  in.now = kT0 + 10 * kH;
  in.clusters = {{"alpha", "", kT0, 4, 0}};
  const Millis s = 1000;
  in.attempts = {
      attempt_fact("alpha", 7, 1, 8, 1, kT0, kT0 + kH, ExitCause::node_lost, std::nullopt, kT0),
      attempt_fact("alpha", 7, 2, 8, 1, kT0 + kH + 30 * s, kT0 + 2 * kH, ExitCause::node_lost,
                   std::nullopt, kT0 + kH + 40 * s),
      attempt_fact("alpha", 7, 3, 8, 1, kT0 + 2 * kH + s, std::nullopt, ExitCause::none,
                   std::nullopt, kT0 + 2 * kH + 5 * s),
  };
  in.attempts[0].last_alive_ms = kT0 + kH - 20 * s;
  in.attempts[1].due_ms = kT0 + kH + 30 * s;
  in.attempts[1].first_progress_ms = kT0 + kH + 90 * s;
  in.attempts[1].last_alive_ms = kT0 + 2 * kH - 10 * s;
  const Scorecard a = compute_scorecards(in).at(0);
  EXPECT_THAT(a.backoff_median_s, Optional(DoubleNear(15, 1e-9)));    // of 30 and 0
  EXPECT_THAT(a.placing_median_s, Optional(DoubleNear(0.5, 1e-9)));   // of 0 and 1
  EXPECT_THAT(a.site_median_s, Optional(DoubleNear(7, 1e-9)));        // of 10 and 4
  EXPECT_THAT(a.startup_median_s, Optional(DoubleNear(50, 1e-9)));    // the second has not printed
  EXPECT_THAT(a.detection_median_s, Optional(DoubleNear(15, 1e-9)));  // of 20 and 10
}

// A cluster's MFU is its attempts' work over their time (MfuOverTime): a day at 0.20 and an
// hour at 0.50 make 0.212, where their median or mean would say 0.35 and rank a cluster that
// mostly runs slow as well as one that mostly runs fast. The vendor's sums the same way.
TEST(Scorecard, TheMfuOfSeveralAttemptsIsTheirWorkOverTheirTime) {
  ScorecardInputs in = history();
  for (auto& a : in.attempts) a.mfu.reset();
  in.attempts[0].mfu = 0.20;
  in.attempts[0].mfu_time_s = 24 * 3600.0;
  in.attempts[2].mfu = 0.50;
  in.attempts[2].mfu_time_s = 3600.0;
  in.attempts[5].mfu = 0.60;  // beta
  in.attempts[5].mfu_time_s = 25 * 3600.0;
  auto cards = compute_scorecards(in);
  EXPECT_THAT(cards[0].mfu, Optional(DoubleNear((0.20 * 24 + 0.50) / 25, 1e-12)));
  EXPECT_THAT(cards[3].mfu, Optional(DoubleNear((0.20 * 24 + 0.50 + 0.60 * 25) / 50, 1e-12)));
}

}  // namespace
}  // namespace orch
