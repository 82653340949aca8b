// Issue 42: an attempt placed and stopped before it launched (its checkpoint was gone, the job
// was cancelled first, the launch failed) says so and why, and is not counted as one of the
// job's attempts: "succeeded after N attempt(s)" counts the ones that ran.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class BrainNotLaunched : public BrainFixture {
 protected:
  void SetUp() override { start({make_cluster("alpha")}); }
  OutboxRow launch() {
    for (const auto& a : outbox("alpha")) {
      if (a.kind == ActionKind::launch) return a;
    }
    ADD_FAILURE() << "no launch in the outbox";
    return {};
  }
};

TEST_F(BrainNotLaunched, AnAttemptWhoseCheckpointWasGoneSaysSoAndIsNotCountedAsATry) {
  const JobId id = submit(make_job().gpus(1).backoff(0));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 10);
  exits(last_attempt(id), std::nullopt, 9);  // killed: resumes from step 10
  handle(Tick{});
  ASSERT_EQ(attempts(id).size(), 2u);
  ASSERT_EQ(attempts(id).at(1).resumed_from_step, 10);

  // The launch's resume check finds step 10 gone, and nothing else passes: nothing launched.
  const CheckpointRow step10 = store->checkpoints_of(id).value().back();
  ResumeChoice choice;
  choice.rejected.push_back({step10.id, 10, true, "not there"});
  choice.bounced = true;
  const OutboxRow bounced = launch();
  handle(LaunchCompleted{bounced.id, bounced.token,
                         make_error(ErrorKind::conflict, "not launched: nothing passed the check"),
                         false, choice});
  const AttemptRow never = attempts(id).at(1);
  EXPECT_EQ(never.not_launched,
            "its checkpoint at step 10 was gone (not there); nothing passed "
            "the check");
  EXPECT_EQ(never.state, AttemptState::exited);

  handle(Tick{});
  site_launches_all("alpha");
  exits(last_attempt(id), 0);
  ASSERT_EQ(attempts(id).size(), 3u);
  EXPECT_EQ(store->job(id).value()->state, JobState::succeeded);
  const auto succeeded = events_of_kind(id, "succeeded");
  ASSERT_EQ(succeeded.size(), 1u);
  EXPECT_THAT(succeeded[0].message, StartsWith("succeeded after 2 attempt(s)"));
  EXPECT_EQ(attempts(id).at(2).not_launched, "");
}

TEST_F(BrainNotLaunched, AnAttemptCancelledBeforeItsLaunchSaysItWasNotLaunched) {
  const JobId id = submit(make_job().gpus(1));
  const OutboxRow skipped = launch();
  handle(CancelJob{id});
  handle(LaunchCompleted{skipped.id, skipped.token,
                         make_error(ErrorKind::conflict, "cancelled before it was launched"),
                         false});
  EXPECT_EQ(last_attempt(id).not_launched, "cancelled before it was launched");
}

TEST_F(BrainNotLaunched, ALaunchThatFailedSaysWhyItWasNotLaunched) {
  const JobId id = submit(make_job().gpus(1));
  const OutboxRow failed = launch();
  handle(LaunchCompleted{failed.id, failed.token,
                         make_error(ErrorKind::invalid, "sbatch: error: invalid partition"),
                         false});
  EXPECT_EQ(attempts(id).at(0).not_launched, "the launch failed: sbatch: error: invalid partition");
  EXPECT_EQ(attempts(id).at(0).cause, ExitCause::launch_failed);
}

TEST_F(BrainNotLaunched, AnAttemptThatLaunchedCarriesNoReason) {
  const JobId id = submit(make_job().gpus(1));
  site_launches_all("alpha");
  EXPECT_EQ(last_attempt(id).not_launched, "");
}

}  // namespace
}  // namespace orch::testing
