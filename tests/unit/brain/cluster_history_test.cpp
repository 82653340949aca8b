// Placement's cluster histories (cluster_history.h): what each cluster's attempts measured, and
// when, so placement can tell a fresh measurement from a stale one (move_worth.h).
#include "scheduler/brain/cluster_history.h"

#include <gmock/gmock.h>

#include "scheduler/store/store.h"
#include "tests/harness/attempt_facts.h"
#include "tests/unit/store/store_rows.h"

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

// Placement's checkpoint cost is the median save time of the window. Kept between refreshes
// (only the checkpoints since the last refresh read, those older than the window let go), it
// is the median a full read of the window gives, as checkpoints come and time moves on.
TEST(ClusterHistory, AWindowOfSaveTimesKeptBetweenRefreshesGivesTheMedianOfAFullRead) {
  auto store = std::move(Store::open(":memory:").value());
  const std::vector<ClusterSpec> clusters = {make_cluster("alpha"), make_cluster("beta")};
  for (const auto& c : clusters)
    ASSERT_TRUE(store->ensure_cluster(c.name, Admission::active, 0).ok());
  const JobId job = store->insert_job(new_job_row(0)).value();
  std::map<std::string, AttemptId> attempt_at;
  int no = 0;
  for (const auto& c : clusters) {
    AttemptRow a = first_attempt_row(job, "orch-" + c.name, c.name, 8);
    a.no = ++no;
    a.started_ms = 0;  // running all along: in every window
    attempt_at[c.name] = store->insert_attempt(a).value();
  }
  SaveTimeWindow window;
  std::int64_t step = 0;
  int compared = 0;
  const Millis day = 24 * kHour;
  // Two checkpoints a day for 45 days, alternating clusters, save times spread so the median
  // moves; the window (30 days) lets go of the first ones from day 30.
  for (Millis now = day; now <= 45 * day; now += day / 2) {
    const std::string at = step % 3 == 0 ? "beta" : "alpha";
    const double save_s = 10.0 + static_cast<double>((step * 37) % 23);
    CheckpointRow c{0,      job,        attempt_at[at], ++step, "/ckpt/" + std::to_string(step),
                    save_s, now - kHour};
    ASSERT_TRUE(store->insert_checkpoint(c).ok());
    if (step % 4 == 0) {  // one without a save time: in neither read
      CheckpointRow none{0, job, attempt_at[at], ++step, "/ckpt/n", std::nullopt, now};
      ASSERT_TRUE(store->insert_checkpoint(none).ok());
    }
    if (step % 5 == 0) continue;  // refreshes that skip a checkpoint or two
    auto full = placement_histories(*store, clusters, now).value();
    auto kept = placement_histories(*store, clusters, now, window).value();
    for (const char* name : {"alpha", "beta"}) {
      compared += full[name].checkpoint_cost_s.has_value() ? 1 : 0;
      EXPECT_EQ(kept[name].checkpoint_cost_s, full[name].checkpoint_cost_s)
          << name << " at day " << static_cast<double>(now) / static_cast<double>(day);
    }
  }
  EXPECT_GT(compared, 100);  // medians compared, not two empty windows
  // A rolled-back event's checkpoints are forgotten with reset(): the window is read afresh.
  window.reset();
  auto kept = placement_histories(*store, clusters, 45 * day, window).value();
  auto full = placement_histories(*store, clusters, 45 * day).value();
  EXPECT_EQ(kept["alpha"].checkpoint_cost_s, full["alpha"].checkpoint_cost_s);
}

}  // namespace
}  // namespace orch::testing
