// The restart policy over a job's whole life (issue 38): the infra budget and the backoff count
// failures in a row without progress. A run of weeks that loses a node every few hours, each time
// after saving newer checkpoints, never spends its budget and never waits: the first infra
// failure after progress is placed again in the event that ended it. Failures that follow each
// other with nothing gained wait longer each time and end the job at the budget.
#include <gmock/gmock.h>

#include "scheduler/lifecycle/attempt_recovery.h"
#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

class BrainRestarts : public BrainFixture {
 protected:
  void SetUp() override { start({make_cluster("alpha")}); }
  JobRow job(JobId id) { return store->job(id).value().value(); }
  // The attempt is killed by a signal (an infra cause that names no node).
  void killed(const AttemptRow& a) { exits(a, std::nullopt, 9); }
  // The job, resuming, is placed again once its backoff is over; how long it waited.
  Millis relaunch(JobId id) {
    const Millis wait = std::max<Millis>(0, job(id).next_attempt_ms.value_or(0) - clock.now_ms());
    clock.advance_ms(wait);
    handle(Tick{});
    site_launches_all("alpha");
    return wait;
  }
};

TEST_F(BrainRestarts, FiveHundredFailuresEachAfterProgressNeverSpendTheBudgetNorTheCap) {
  const JobId id = submit(make_job().infra_restarts(10).backoff(10, 600, 2));
  site_launches_all("alpha");
  int step = 0;
  for (int i = 0; i < 500; ++i) {
    const AttemptRow a = last_attempt(id);
    ASSERT_EQ(a.state, AttemptState::running) << "failure " << i;
    train(a, step + 1, step + 20, 10);  // two newer checkpoints
    step += 20;
    clock.advance_ms(3 * 3600 * 1000 / 20);  // a few steps of a 54-day run between failures
    killed(a);
    ASSERT_NE(job(id).state, JobState::failed) << "failure " << i << ": " << job(id).reason;
    ASSERT_NE(job(id).state, JobState::resuming) << "failure " << i << " was not placed at once";
    EXPECT_EQ(relaunch(id), 0) << "failure " << i << " waited after a healthy stretch";
  }
  EXPECT_EQ(job(id).infra_restarts, 500);
  EXPECT_EQ(last_attempt(id).resumed_from_step, step);
}

TEST_F(BrainRestarts, FailuresWithNothingGainedWaitLongerEachTimeAndEndAtTheBudget) {
  const JobId id = submit(make_job().infra_restarts(4).backoff(10, 600, 2));
  site_launches_all("alpha");
  std::vector<Millis> waits;
  for (int i = 0; i < 4; ++i) {
    killed(last_attempt(id));  // dies before any step
    ASSERT_NE(job(id).state, JobState::failed) << job(id).reason;
    waits.push_back(relaunch(id));
  }
  EXPECT_EQ(waits, (std::vector<Millis>{0, 10000, 20000, 40000}));
  killed(last_attempt(id));
  EXPECT_EQ(job(id).state, JobState::failed);
  EXPECT_THAT(job(id).reason,
              ::testing::HasSubstr("budget spent (4 of 4 restarts in a row without progress)"));
}

TEST_F(BrainRestarts, ProgressStartsTheCountAndTheBackoffAgain) {
  const JobId id = submit(make_job().infra_restarts(2).backoff(10, 600, 2));
  site_launches_all("alpha");
  killed(last_attempt(id));
  EXPECT_EQ(relaunch(id), 0) << "the first infra failure resumes at once";
  killed(last_attempt(id));
  EXPECT_EQ(relaunch(id), 10000) << "the second failure in a row waits";
  train(last_attempt(id), 1, 10, 10);  // a checkpoint: progress
  killed(last_attempt(id));
  EXPECT_EQ(relaunch(id), 0) << "after progress the count starts again";
  killed(last_attempt(id));
  EXPECT_EQ(relaunch(id), 10000);
  killed(last_attempt(id));
  EXPECT_EQ(job(id).state, JobState::failed) << "a third in a row without progress";
}

TEST_F(BrainRestarts, ARunThatLastedItsHealthyStretchIsProgressWithoutACheckpoint) {
  JobSpec spec = make_job().infra_restarts(1).backoff(10, 600, 2);
  spec.restart.healthy_after_s = 600;
  const JobId id = submit(spec);
  site_launches_all("alpha");
  for (int i = 0; i < 5; ++i) {
    clock.advance_ms(601 * 1000);  // ran long enough, saved nothing
    killed(last_attempt(id));
    ASSERT_NE(job(id).state, JobState::failed) << "failure " << i << ": " << job(id).reason;
    EXPECT_EQ(relaunch(id), 0);
  }
}

// Where each second of a recovery went, from the attempts' own rows: the first node loss is
// placed again in the event that ended it (no backoff, no tick), the second in a row waits its
// backoff; the site's queue and the job's start are their own parts.
TEST_F(BrainRestarts, EachRecoveryIsSplitIntoDetectionBackoffPlacingSiteAndStartup) {
  const JobId id = submit(make_job().infra_restarts(5).backoff(10, 600, 2));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 20, 10);
  clock.advance_ms(7'000);  // the node dies 7 s after the last progress line; then the verdict
  killed(last_attempt(id));
  const AttemptRow second = last_attempt(id);
  ASSERT_EQ(second.no, 2) << "placed in the event that ended attempt 1";
  clock.advance_ms(4'000);  // the site's queue and launch
  site_launches_all("alpha");
  clock.advance_ms(30'000);  // loading the model and the checkpoint
  train(last_attempt(id), 21, 21, 0);
  const auto rows = attempts(id);
  RecoveryBreakdown b = recovery_between(rows[0], rows[1]).value();
  EXPECT_THAT(b.detection_s, ::testing::Optional(7.0));
  EXPECT_EQ(b.backoff_s, 0);
  EXPECT_EQ(b.placing_s, 0);
  EXPECT_THAT(b.site_s, ::testing::Optional(4.0));
  EXPECT_THAT(b.startup_s, ::testing::Optional(30.0));
  EXPECT_THAT(b.total_s, ::testing::Optional(41.0));

  killed(last_attempt(id));  // at once, no progress since: a second failure in a row
  clock.advance_ms(12'000);  // the 10 s backoff, then 2 s until a tick finds room
  handle(Tick{});
  site_launches_all("alpha");
  const auto later = attempts(id);
  ASSERT_EQ(later.size(), 3u);
  EXPECT_EQ(recovery_between(later[2], later[0]), std::nullopt) << "attempt 3 has not ended";
  b = recovery_between(later[1], later[2]).value();
  EXPECT_EQ(b.backoff_s, 10);
  EXPECT_EQ(b.placing_s, 2);
  EXPECT_THAT(b.site_s, ::testing::Optional(0.0));
  EXPECT_EQ(b.startup_s, std::nullopt) << "no progress line yet";
}

TEST_F(BrainRestarts, UserFailuresSpendTheirOwnBudgetAndWaitFromTheFirst) {
  const JobId id = submit(make_job().infra_restarts(5).user_restarts(1).backoff(10, 600, 2));
  site_launches_all("alpha");
  exits(last_attempt(id), 1);
  ASSERT_EQ(job(id).state, JobState::resuming);
  EXPECT_EQ(relaunch(id), 10000);
  exits(last_attempt(id), 1);
  EXPECT_EQ(job(id).state, JobState::failed) << "the user budget counts every restart";
}

}  // namespace
}  // namespace orch::testing
