// The restart policy over a job's whole life (issue 38): the infra budget and the backoff count
// failures in a row without progress. A run of weeks that loses a node every few hours, each time
// after saving newer checkpoints, never spends its budget and never waits more than the first
// backoff; failures that follow each other with nothing gained wait longer each time and end the
// job at the budget.
#include <gmock/gmock.h>

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
    EXPECT_EQ(relaunch(id), 10000) << "failure " << i << " waited more than the first backoff";
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
    ASSERT_EQ(job(id).state, JobState::resuming) << job(id).reason;
    waits.push_back(relaunch(id));
  }
  EXPECT_EQ(waits, (std::vector<Millis>{10000, 20000, 40000, 80000}));
  killed(last_attempt(id));
  EXPECT_EQ(job(id).state, JobState::failed);
  EXPECT_THAT(job(id).reason,
              ::testing::HasSubstr("budget spent (4 of 4 restarts in a row without progress)"));
}

TEST_F(BrainRestarts, ProgressStartsTheCountAndTheBackoffAgain) {
  const JobId id = submit(make_job().infra_restarts(2).backoff(10, 600, 2));
  site_launches_all("alpha");
  killed(last_attempt(id));
  EXPECT_EQ(relaunch(id), 10000);
  killed(last_attempt(id));
  EXPECT_EQ(relaunch(id), 20000) << "the second failure in a row waits longer";
  train(last_attempt(id), 1, 10, 10);  // a checkpoint: progress
  killed(last_attempt(id));
  EXPECT_EQ(relaunch(id), 10000) << "after progress the count starts again";
  killed(last_attempt(id));
  EXPECT_EQ(relaunch(id), 20000);
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
    ASSERT_EQ(job(id).state, JobState::resuming) << "failure " << i << ": " << job(id).reason;
    EXPECT_EQ(relaunch(id), 10000);
  }
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
