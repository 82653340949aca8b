// Placement's cluster histories (cluster_history.h): what each cluster's attempts measured, and
// when, so placement can tell a fresh measurement from a stale one (move_worth.h).
#include "scheduler/brain/cluster_history.h"

#include <gmock/gmock.h>

#include "tests/harness/attempt_facts.h"

namespace orch::testing {
namespace {

using ::testing::Optional;

constexpr Millis kHour = 3'600'000;

// An attempt of two nodes (16 GPUs) placed at `started`, ended at `ended` (nullopt: running).
AttemptFact attempt(std::string cluster, Millis started, std::optional<Millis> ended,
                    std::optional<double> mfu) {
  return attempt_fact(std::move(cluster), 1, 1, 16, 2, started, ended, ExitCause::none, mfu);
}

TEST(ClusterHistory, AClusterNeverMeasuredHasNoMfuNorMeasurementTime) {
  ScorecardInputs in;
  in.now = 10 * kHour;
  in.attempts = {attempt("alpha", 0, 2 * kHour, std::nullopt)};
  auto h = cluster_histories(in);
  EXPECT_FALSE(h["alpha"].mfu.has_value());
  EXPECT_FALSE(h["alpha"].mfu_measured_ms.has_value());
  EXPECT_DOUBLE_EQ(h["alpha"].node_hours, 4.0);
}

TEST(ClusterHistory, TheMeasurementIsAsRecentAsTheLatestAttemptThatReportedMfu) {
  ScorecardInputs in;
  in.now = 10 * kHour;
  in.attempts = {attempt("alpha", 0, 2 * kHour, 0.30), attempt("alpha", 2 * kHour, 5 * kHour, 0.40),
                 attempt("alpha", 5 * kHour, 6 * kHour, std::nullopt),
                 attempt("beta", 0, 1 * kHour, 0.50)};
  auto h = cluster_histories(in);
  EXPECT_THAT(h["alpha"].mfu, Optional(0.35));
  EXPECT_THAT(h["alpha"].mfu_measured_ms, Optional(5 * kHour));
  EXPECT_THAT(h["beta"].mfu_measured_ms, Optional(1 * kHour));
}

TEST(ClusterHistory, AnAttemptStillRunningMeasuresUpToNow) {
  ScorecardInputs in;
  in.now = 10 * kHour;
  in.attempts = {attempt("alpha", 0, 2 * kHour, 0.30),
                 attempt("alpha", 3 * kHour, std::nullopt, 0.32)};
  EXPECT_THAT(cluster_histories(in)["alpha"].mfu_measured_ms, Optional(10 * kHour));
}

// What placement reads of a cluster (goodput's expected MFU) is the work over time of its
// attempts: three hours of steps at 0.20 and one at 0.60 are 0.30, not their median 0.40.
TEST(ClusterHistory, AClustersMfuIsItsAttemptsWorkOverTheirTime) {
  ScorecardInputs in;
  in.now = 10 * kHour;
  in.attempts = {attempt("alpha", 0, 4 * kHour, 0.20),
                 attempt("alpha", 4 * kHour, 5 * kHour, 0.60)};
  in.attempts[0].mfu_time_s = 3 * 3600.0;
  in.attempts[1].mfu_time_s = 1 * 3600.0;
  EXPECT_THAT(cluster_histories(in)["alpha"].mfu, Optional(::testing::DoubleNear(0.30, 1e-12)));
}

}  // namespace
}  // namespace orch::testing
