// Placement rounds cost what changed, not the length of the queue: a job that fits nowhere is
// not evaluated again until capacity changes, and then it is placed at once.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

class BrainQueue : public BrainFixture {
 protected:
  void SetUp() override { start({make_cluster("alpha")}); }  // 2 nodes x 4 GPUs

  // When placement last judged the job (its verdicts' time).
  Millis judged_at(JobId id) {
    auto verdicts = store->verdicts_of(id).value();
    EXPECT_FALSE(verdicts.empty());
    return verdicts.empty() ? 0 : verdicts.front().at_ms;
  }
};

TEST_F(BrainQueue, ABlockedJobIsNotJudgedAgainWhileNothingChanges) {
  JobId big = submit(make_job().nodes(2).gpus(4));
  JobId waiting = submit(make_job().gpus(4));
  ASSERT_EQ(job(big).state, JobState::placed);
  ASSERT_EQ(job(waiting).state, JobState::pending);
  const Millis judged = judged_at(waiting);

  for (int i = 0; i < 5; ++i) {
    clock.advance_ms(1000);
    handle(Tick{});
  }
  EXPECT_EQ(judged_at(waiting), judged);
  EXPECT_EQ(job(waiting).state, JobState::pending);
}

TEST_F(BrainQueue, FreedCapacityUnblocksTheWaitingJobOnTheNextRound) {
  JobId big = submit(make_job().nodes(2).gpus(4));
  JobId waiting = submit(make_job().gpus(4));
  site_launches_all("alpha");
  clock.advance_ms(1000);
  exits(last_attempt(big), 0);
  handle(Tick{});

  EXPECT_EQ(job(big).state, JobState::succeeded);
  EXPECT_EQ(job(waiting).state, JobState::placed);
  EXPECT_EQ(judged_at(waiting), clock.now_ms());
}

TEST_F(BrainQueue, ANodeComingBackUnblocksAJobThatNeedsIt) {
  handle(InventoryObserved{"alpha", {{{"alpha-n0", 4, true, ""}, {"alpha-n1", 4, false, "down"}}}});
  JobId id = submit(make_job().nodes(2).gpus(4));
  ASSERT_EQ(job(id).state, JobState::pending);
  EXPECT_THAT(job(id).reason, ::testing::HasSubstr("only 4 of 8 GPUs free"));

  clock.advance_ms(1000);
  handle(InventoryObserved{"alpha", {{{"alpha-n0", 4, true, ""}, {"alpha-n1", 4, true, ""}}}});
  handle(Tick{});
  EXPECT_EQ(job(id).state, JobState::placed);
}

// Backfill (brain_backfill_test.cpp): the free GPUs are held for the blocked big job; a small
// job behind it takes them only when its time limit ends it before the big job can start.
TEST_F(BrainQueue, ASmallJobBehindABlockedBigOneIsPlacedOnlyWhenItEndsInTime) {
  JobId first = submit(make_job().gpus(4).time_limit_s(3600));
  JobId big = submit(make_job().nodes(2).gpus(4));
  JobId small = submit(make_job().gpus(2));
  JobId quick = submit(make_job().gpus(2).time_limit_s(600));
  EXPECT_EQ(job(first).state, JobState::placed);
  EXPECT_EQ(job(big).state, JobState::pending);
  EXPECT_EQ(job(small).state, JobState::pending);
  EXPECT_EQ(job(quick).state, JobState::placed);
}

TEST_F(BrainQueue, ACapacityChangeThatCannotHoldTheJobDoesNotJudgeItAgain) {
  JobId running = submit(make_job().gpus(2));
  JobId other = submit(make_job().gpus(2));
  JobId big = submit(make_job().nodes(2).gpus(4));
  ASSERT_EQ(job(big).state, JobState::pending);
  const Millis judged = judged_at(big);
  site_launches_all("alpha");

  // Half the cluster frees up: still not enough for 8 GPUs, so the job is not evaluated.
  clock.advance_ms(1000);
  exits(last_attempt(running), 0);
  handle(Tick{});
  EXPECT_EQ(judged_at(big), judged);
  EXPECT_EQ(job(big).state, JobState::pending);

  // The rest frees up: placed.
  clock.advance_ms(1000);
  exits(last_attempt(other), 0);
  handle(Tick{});
  EXPECT_EQ(job(big).state, JobState::placed);
}

}  // namespace
}  // namespace orch::testing
