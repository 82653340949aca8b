// The queue of waiting jobs: placement order, backoff, and trying only what a change unblocks.
#include "scheduler/brain/waiting_queue.h"

#include <gtest/gtest.h>

namespace orch {
namespace {

JobChange waiting(JobId id, JobState state = JobState::pending, int gpus = 8) {
  JobChange c;
  c.id = id;
  c.state = state;
  c.nodes = 1;
  c.gpus_per_node = gpus;
  return c;
}

const auto kAnything = [](const JobChange&) { return true; };
const auto kNothing = [](const JobChange&) { return false; };

TEST(WaitingQueue, ResumingJobsComeFirstThenTheOldest) {
  WaitingQueue q;
  q.reset({waiting(3), waiting(1), waiting(7, JobState::resuming), waiting(2, JobState::staging)});
  EXPECT_EQ(q.due(0, 1, kAnything), (std::vector<JobId>{7, 1, 2, 3}));
}

TEST(WaitingQueue, JobsLeaveWhenPlacedOrEndedAndMoveWhenTheyStartResuming) {
  WaitingQueue q;
  q.reset({waiting(1), waiting(2)});
  q.apply(waiting(1, JobState::placed));
  q.apply(waiting(5));
  q.apply(waiting(2, JobState::cancelled));
  q.apply(waiting(9, JobState::resuming));
  EXPECT_EQ(q.due(0, 1, kAnything), (std::vector<JobId>{9, 5}));
  EXPECT_EQ(q.size(), 2u);
  EXPECT_FALSE(q.contains(1));
}

// Issue 45 (job_holds.h): a held job is in the queue but in no round, whatever the capacity.
TEST(WaitingQueue, AHeldJobIsNeverDueUntilReleased) {
  WaitingQueue q;
  q.reset({waiting(1), waiting(2)});
  q.hold(1);
  EXPECT_EQ(q.due(0, 1, kAnything), (std::vector<JobId>{2}));
  EXPECT_EQ(q.due(0, 2, kAnything), (std::vector<JobId>{2}));  // a new capacity version
  EXPECT_TRUE(q.contains(1));
  q.apply(waiting(1));  // its row written again (a reason): still held
  EXPECT_EQ(q.due(0, 3, kAnything), (std::vector<JobId>{2}));
  q.release(1);
  EXPECT_EQ(q.due(0, 3, kAnything), (std::vector<JobId>{1, 2}));
}

TEST(WaitingQueue, AJobInBackoffWaitsForItsTime) {
  WaitingQueue q;
  JobChange later = waiting(1, JobState::resuming);
  later.next_attempt_ms = 5000;
  q.reset({later, waiting(2)});
  EXPECT_EQ(q.due(4999, 1, kAnything), (std::vector<JobId>{2}));
  EXPECT_EQ(q.next_due(4999), 5000);
  EXPECT_EQ(q.due(5000, 1, kAnything), (std::vector<JobId>{1, 2}));
}

TEST(WaitingQueue, ABlockedJobIsNotTriedAgainUntilCapacityChanges) {
  WaitingQueue q;
  q.reset({waiting(1), waiting(2)});
  q.mark_blocked(1, 4);
  EXPECT_EQ(q.due(0, 4, kAnything), (std::vector<JobId>{2}));
  EXPECT_EQ(q.due(0, 5, kAnything), (std::vector<JobId>{1, 2}));
}

TEST(WaitingQueue, AChangeThatCannotHoldTheJobMarksItBlockedWithoutATry) {
  WaitingQueue q;
  q.reset({waiting(1, JobState::pending, 8), waiting(2, JobState::pending, 2)});
  q.mark_blocked(1, 4);
  q.mark_blocked(2, 4);
  auto small_only = [](const JobChange& j) { return j.gpus_per_node <= 2; };
  EXPECT_EQ(q.due(0, 5, small_only), (std::vector<JobId>{2}));
  q.mark_blocked(2, 5);  // tried, and it did not fit after all
  // Job 1 counts as tried at version 5: not even asked again until the next change.
  int asked = 0;
  auto counting = [&](const JobChange&) { return ++asked, true; };
  EXPECT_TRUE(q.due(0, 5, counting).empty());
  EXPECT_EQ(asked, 0);
}

TEST(WaitingQueue, ANewStateOrBackoffForgetsTheBlock) {
  WaitingQueue q;
  q.reset({waiting(1)});
  q.mark_blocked(1, 3);
  q.apply(waiting(1));  // the same state: a reason changed, still blocked
  EXPECT_TRUE(q.due(0, 3, kNothing).empty());
  q.apply(waiting(1, JobState::staging));
  EXPECT_EQ(q.due(0, 3, kNothing), (std::vector<JobId>{1}));
}

}  // namespace
}  // namespace orch
