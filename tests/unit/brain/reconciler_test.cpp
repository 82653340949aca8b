// The reconciling part on its own: an attempt the brain ended when its site went silent is found
// running again. Exactly one attempt keeps the job: the one further ahead (a tie keeps the
// replacement); the other is asked to stop, and a "reconciled" event says why.
#include <gmock/gmock.h>

#include "scheduler/brain/reconciler.h"
#include "tests/harness/brain_part_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class ReconcilerTest : public BrainPartFixture {
 protected:
  void SetUp() override {
    start({make_cluster("alpha"), make_cluster("beta")});
    reconciler = std::make_unique<Reconciler>(*core);
    job_row = add_job(make_job().nodes(1).gpus(4), JobState::running);
  }

  // Attempt 1 on alpha reached `stale_step` and was ended when alpha went silent; attempt 2 on
  // beta resumed from step 30 and reached `live_step`.
  void failover(std::int64_t stale_step, std::int64_t live_step) {
    stale = add_attempt(job_row, "alpha", 1, {"alpha-n0"});
    stale.last_step = stale_step;
    stale.cause = ExitCause::site_down;
    ASSERT_TRUE(store->set_attempt_state(stale, AttemptState::exited, clock.now_ms()).ok());
    live = add_attempt(job_row, "beta", 2, {"beta-n0"});
    live.resumed_from_step = 30;
    live.last_step = live_step;
    ASSERT_TRUE(store->update_attempt(live).ok());
  }

  void found_running() {
    JobRow j = job(job_row.id);
    in_transaction([&] { return reconciler->reconcile_stale(stale, true, j); });
  }

  std::unique_ptr<Reconciler> reconciler;
  JobRow job_row;
  AttemptRow stale, live;
};

TEST_F(ReconcilerTest, TheStaleCopyFurtherAheadKeepsTheJobAndTheReplacementIsStopped) {
  failover(50, 35);
  found_running();
  EXPECT_EQ(attempt(stale).state, AttemptState::running);
  EXPECT_FALSE(attempt(stale).cancel_requested);
  EXPECT_TRUE(attempt(live).cancel_requested);
  ASSERT_EQ(outbox("beta", ActionKind::cancel).size(), 1u);
  EXPECT_EQ(outbox("beta", ActionKind::cancel)[0].token, live.token);
  auto why = events_of_kind(job_row.id, "reconciled");
  ASSERT_EQ(why.size(), 1u);
  EXPECT_THAT(why[0].message, HasSubstr("cancelling attempt 2 on beta at step 35"));
}

TEST_F(ReconcilerTest, ATieKeepsTheReplacement) {
  failover(40, 40);
  found_running();
  EXPECT_EQ(attempt(stale).state, AttemptState::exited);
  EXPECT_TRUE(attempt(stale).cancel_requested);
  EXPECT_FALSE(attempt(live).cancel_requested);
  EXPECT_EQ(outbox("alpha", ActionKind::cancel).size(), 1u);
  EXPECT_THAT(events_of_kind(job_row.id, "reconciled").at(0).message,
              HasSubstr("(a tie keeps the replacement)"));
}

TEST_F(ReconcilerTest, ACopyFoundAfterTheJobEndedIsStopped) {
  failover(50, 35);
  ASSERT_TRUE(store->set_job_state(job_row, JobState::cancelled, clock.now_ms()).ok());
  found_running();
  EXPECT_TRUE(attempt(stale).cancel_requested);
  EXPECT_THAT(events_of_kind(job_row.id, "reconciled").at(0).message,
              HasSubstr("the job is already cancelled"));
}

}  // namespace
}  // namespace orch::testing
