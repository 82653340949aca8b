// Cancel: asks the site to stop, never relaunches, and cannot be applied twice.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class BrainCancel : public BrainFixture {
 protected:
  void SetUp() override { start({make_cluster("alpha"), make_cluster("beta")}); }
};

TEST_F(BrainCancel, CancelAsksTheSiteToStopTheLiveAttempt) {
  JobId id = submit(make_job());
  site_launches_all("alpha");
  handle(CancelJob{id});

  EXPECT_EQ(job(id).state, JobState::cancelled);
  auto actions = outbox("alpha");
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::cancel);
  EXPECT_TRUE(last_attempt(id).cancel_requested);
}

TEST_F(BrainCancel, AttemptKilledByOurCancelIsCancelledNotResumed) {
  JobId id = submit(make_job().backoff(0));
  site_launches_all("alpha");
  handle(CancelJob{id});
  exits(last_attempt(id), std::nullopt, 15);

  EXPECT_EQ(attempts(id).size(), 1u);
  EXPECT_EQ(last_attempt(id).cause, ExitCause::cancelled);
  EXPECT_EQ(job(id).state, JobState::cancelled);
  EXPECT_EQ(job(id).infra_restarts, 0);
}

// Kubernetes deletes a cancelled Job's pods: the site may answer "unknown" instead of "exited".
TEST_F(BrainCancel, AttemptGoneAfterOurCancelIsCancelledNotLost) {
  JobId id = submit(make_job().backoff(0));
  site_launches_all("alpha");
  handle(CancelJob{id});
  handle(AttemptObserved{
      "alpha", last_attempt(id).token, RunPhase::unknown, std::nullopt, {}, {}, {}});

  EXPECT_EQ(attempts(id).size(), 1u);
  EXPECT_EQ(last_attempt(id).cause, ExitCause::cancelled);
  EXPECT_EQ(job(id).infra_restarts, 0);
}

TEST_F(BrainCancel, CancellingAFinishedJobIsAConflict) {
  JobId id = submit(make_job());
  site_launches_all("alpha");
  exits(last_attempt(id), 0);
  auto r = brain->handle(CancelJob{id});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::conflict);
  EXPECT_THAT(r.error().message, HasSubstr("already succeeded"));
}

TEST_F(BrainCancel, CancellingAnUnknownJobIsNotFound) {
  auto r = brain->handle(CancelJob{999});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::not_found);
}

TEST_F(BrainCancel, CancelWhileResumingPlacesNothingMore) {
  JobId id = submit(make_job().backoff(5).user_restarts(1));
  site_launches_all("alpha");
  exits(last_attempt(id), 1);  // the job's own failure: it waits out the backoff
  EXPECT_EQ(job(id).state, JobState::resuming);
  handle(CancelJob{id});
  clock.advance_ms(10'000);
  handle(Tick{});
  EXPECT_EQ(attempts(id).size(), 1u);
  EXPECT_EQ(job(id).state, JobState::cancelled);
}

TEST_F(BrainCancel, LaunchConfirmedAfterCancelStillGetsStopped) {
  JobId id = submit(make_job());
  auto launch = outbox("alpha").at(0);
  handle(CancelJob{id});
  handle(LaunchCompleted{launch.id, launch.token, LaunchResult{"77", {}}, false});
  auto actions = outbox("alpha");
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::cancel);
}

}  // namespace
}  // namespace orch::testing
