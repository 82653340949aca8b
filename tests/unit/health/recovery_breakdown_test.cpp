// Where the seconds of a recovery go: each part from its own two times, the parts adding up to
// the total, parts not over yet left open, and a skewed clock never making one negative.
#include "scheduler/health/recovery_breakdown.h"

#include <gmock/gmock.h>

namespace orch {
namespace {

using ::testing::DoubleEq;
using ::testing::Optional;

constexpr Millis kT0 = 1'700'000'000'000;
constexpr Millis kS = 1000;

// A node dies at T0 after its last heartbeat; the verdict 12 s later; a 10 s backoff; placed
// 0.5 s after it ended; running at the site 3 s later; the first progress line 40 s after that.
RecoveryTimes a_node_loss() {
  return {kT0,
          kT0 + 12 * kS,
          kT0 + 22 * kS,
          kT0 + 22 * kS + 500,
          kT0 + 25 * kS + 500,
          kT0 + 65 * kS + 500};
}

TEST(RecoveryBreakdown, EachPartRunsFromItsOwnStartToItsOwnEnd) {
  const RecoveryBreakdown b = recovery_breakdown(a_node_loss());
  EXPECT_THAT(b.detection_s, Optional(DoubleEq(12)));
  EXPECT_DOUBLE_EQ(b.backoff_s, 10);
  EXPECT_DOUBLE_EQ(b.placing_s, 0.5);
  EXPECT_THAT(b.site_s, Optional(DoubleEq(3)));
  EXPECT_THAT(b.startup_s, Optional(DoubleEq(40)));
  EXPECT_THAT(b.total_s, Optional(DoubleEq(65.5)));
  EXPECT_DOUBLE_EQ(*b.detection_s + b.backoff_s + b.placing_s + *b.site_s + *b.startup_s,
                   *b.total_s);
  EXPECT_EQ(recovery_text(b),
            "65.5 s: detection 12.0 s, backoff 10.0 s, placing 0.5 s, site 3.0 s, startup 40.0 s");
}

TEST(RecoveryBreakdown, NoBackoffIsAllPlacingAndPartsNotOverYetAreOpen) {
  RecoveryTimes t = a_node_loss();
  t.due_ms.reset();  // the first infra failure: no backoff
  t.first_progress_ms.reset();
  const RecoveryBreakdown b = recovery_breakdown(t);
  EXPECT_DOUBLE_EQ(b.backoff_s, 0);
  EXPECT_DOUBLE_EQ(b.placing_s, 10.5);
  EXPECT_THAT(b.site_s, Optional(DoubleEq(3)));
  EXPECT_EQ(b.startup_s, std::nullopt);
  EXPECT_EQ(b.total_s, std::nullopt);
  EXPECT_EQ(recovery_text(b),
            "...: detection 12.0 s, backoff 0.0 s, placing 10.5 s, site 3.0 s, startup ...");
  t.running_ms.reset();
  EXPECT_EQ(recovery_breakdown(t).site_s, std::nullopt);
}

TEST(RecoveryBreakdown, AnUnknownSignOfLifeLeavesDetectionOpenAndTheTotalStartsAtTheVerdict) {
  RecoveryTimes t = a_node_loss();
  t.last_alive_ms.reset();
  const RecoveryBreakdown b = recovery_breakdown(t);
  EXPECT_EQ(b.detection_s, std::nullopt);
  EXPECT_THAT(b.total_s, Optional(DoubleEq(53.5)));
}

TEST(RecoveryBreakdown, ASkewedClockMakesAPartZeroNeverNegative) {
  // A site whose clock runs ahead: its last heartbeat after the verdict, and the run reported
  // before the placement; a backoff that ended after the placement (placed by hand).
  const RecoveryTimes t{kT0 + 20 * kS, kT0 + 12 * kS, kT0 + 30 * kS,
                        kT0 + 22 * kS, kT0 + 21 * kS, kT0 + 50 * kS};
  const RecoveryBreakdown b = recovery_breakdown(t);
  EXPECT_THAT(b.detection_s, Optional(DoubleEq(0)));
  EXPECT_DOUBLE_EQ(b.backoff_s, 10);
  EXPECT_DOUBLE_EQ(b.placing_s, 0);
  EXPECT_THAT(b.site_s, Optional(DoubleEq(0)));
  EXPECT_THAT(b.startup_s, Optional(DoubleEq(28)));
  EXPECT_THAT(b.total_s, Optional(DoubleEq(38)));
}

}  // namespace
}  // namespace orch
