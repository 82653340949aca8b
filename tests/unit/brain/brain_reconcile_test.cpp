// Duplicates: a site the brain gave up on comes back still running (or queueing) the attempt it
// declared ended. The copy with more progress keeps the job, the other is cancelled, a
// "reconciled" event says why, and never do two attempts carry one job.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class BrainReconcile : public BrainFixture {
 protected:
  void SetUp() override { start({make_cluster("alpha"), make_cluster("beta")}); }

  // Attempt 1 on alpha reaches step 30 (checkpoints every 10), alpha goes dark, and the job
  // is placed again on beta, resuming from step 30. Returns the stale attempt.
  AttemptRow stale_after_failover(JobId id) {
    site_launches_all("alpha");
    AttemptRow stale = last_attempt(id);
    train(stale, 1, 30);
    site_goes_dark("alpha");
    EXPECT_EQ(attempts(id).at(0).cause, ExitCause::site_down);
    EXPECT_EQ(last_attempt(id).cluster, "beta");
    EXPECT_EQ(last_attempt(id).resumed_from_step, 30);
    return stale;
  }

  std::string reconciled(JobId id) {
    auto events = events_of_kind(id, "reconciled");
    EXPECT_EQ(events.size(), 1u);
    return events.empty() ? std::string() : events.back().message;
  }

  std::vector<OutboxRow> cancels(const std::string& cluster) {
    std::vector<OutboxRow> out;
    for (const auto& a : outbox(cluster)) {
      if (a.kind == ActionKind::cancel) out.push_back(a);
    }
    return out;
  }
};

TEST_F(BrainReconcile, StaleCopyFurtherAheadIsReinstatedAndTheReplacementCancelled) {
  JobId id = submit(make_job().backoff(0));
  AttemptRow stale = stale_after_failover(id);
  site_launches_all("beta");
  train(last_attempt(id), 31, 40);

  handle(SiteReachable{"alpha"});
  train(stale, 31, 50);  // it kept running through the outage: its output since, read now

  auto all = attempts(id);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].state, AttemptState::running);
  EXPECT_EQ(all[0].cause, ExitCause::none);
  EXPECT_FALSE(all[0].site_done);
  EXPECT_FALSE(all[0].ended_ms.has_value());
  EXPECT_EQ(all[0].last_step, 50);
  EXPECT_EQ(all[0].steps_lost, 0) << "it goes on: nothing it did is done again";
  EXPECT_TRUE(all[1].cancel_requested);
  EXPECT_EQ(all[1].steps_lost, 10) << "every step of the replacement is thrown away";
  EXPECT_EQ(job(id).state, JobState::running);
  ASSERT_EQ(carrying(id).size(), 1u);
  EXPECT_EQ(carrying(id)[0].no, 1);
  ASSERT_EQ(cancels("beta").size(), 1u);
  EXPECT_EQ(cancels("beta")[0].token, all[1].token);
  EXPECT_TRUE(cancels("alpha").empty());
  EXPECT_EQ(reconciled(id),
            "duplicate: attempt 1 on alpha kept running while alpha was unreachable and is at "
            "step 50; cancelling attempt 2 on beta at step 40");

  // The replacement's end, caused by that cancel, resumes nothing.
  exits(all[1], std::nullopt, 15);
  EXPECT_EQ(attempts(id).at(1).cause, ExitCause::cancelled);
  handle(Tick{});
  EXPECT_EQ(attempts(id).size(), 2u);
  EXPECT_EQ(job(id).state, JobState::running);
  EXPECT_EQ(job(id).infra_restarts, 1);

  exits(attempts(id).at(0), 0);
  EXPECT_EQ(job(id).state, JobState::succeeded);
}

TEST_F(BrainReconcile, AReinstatedAttemptThatFailsLaterIsTheOneTheNextResumesFrom) {
  JobId id = submit(make_job().backoff(0));
  AttemptRow stale = stale_after_failover(id);
  site_launches_all("beta");
  train(last_attempt(id), 31, 40);
  handle(SiteReachable{"alpha"});
  train(stale, 31, 50);
  exits(attempts(id).at(1), std::nullopt, 15);  // the cancelled replacement

  exits(attempts(id).at(0), std::nullopt, 9);  // killed: resume (step 50 is at both sites)
  auto all = attempts(id);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2].resumed_from_step, 50) << "the reinstated attempt, not the duplicate, ran last";
  EXPECT_EQ(all[1].steps_lost, 10) << "the duplicate's count is not overwritten";
  EXPECT_EQ(all[0].steps_lost, 0);
  EXPECT_EQ(job(id).infra_restarts, 2);
}

TEST_F(BrainReconcile, ReplacementFurtherAheadKeepsTheJobAndTheStaleCopyIsCancelled) {
  JobId id = submit(make_job().backoff(0));
  AttemptRow stale = stale_after_failover(id);
  site_launches_all("beta");
  train(last_attempt(id), 31, 60);

  handle(SiteReachable{"alpha"});
  train(stale, 31, 45);

  auto all = attempts(id);
  EXPECT_EQ(all[0].state, AttemptState::exited);
  EXPECT_EQ(all[0].cause, ExitCause::site_down);
  EXPECT_TRUE(all[0].cancel_requested);
  EXPECT_EQ(all[0].steps_lost, 15) << "steps 31..45 past the checkpoint the replacement used";
  EXPECT_FALSE(all[1].cancel_requested);
  EXPECT_EQ(job(id).state, JobState::running);
  ASSERT_EQ(carrying(id).size(), 1u);
  EXPECT_EQ(carrying(id)[0].no, 2);
  ASSERT_EQ(cancels("alpha").size(), 1u);
  EXPECT_EQ(cancels("alpha")[0].token, stale.token);
  EXPECT_TRUE(cancels("beta").empty());
  EXPECT_EQ(reconciled(id),
            "duplicate: attempt 1 on alpha kept running while alpha was unreachable and is at "
            "step 45; attempt 2 on beta is at step 60 and keeps the job; cancelling attempt 1 "
            "on alpha");

  // The stale copy stops; the job goes on where it is.
  exits(stale, std::nullopt, 15);
  EXPECT_TRUE(attempts(id).at(0).site_done);
  EXPECT_EQ(attempts(id).size(), 2u);
  EXPECT_EQ(job(id).state, JobState::running);
  EXPECT_EQ(job(id).infra_restarts, 1);
}

TEST_F(BrainReconcile, ATieKeepsTheReplacement) {
  JobId id = submit(make_job().backoff(0));
  AttemptRow stale = stale_after_failover(id);
  site_launches_all("beta");
  train(last_attempt(id), 31, 40);
  handle(SiteReachable{"alpha"});
  train(stale, 31, 40);

  EXPECT_TRUE(attempts(id).at(0).cancel_requested);
  EXPECT_FALSE(attempts(id).at(1).cancel_requested);
  ASSERT_EQ(carrying(id).size(), 1u);
  EXPECT_EQ(carrying(id)[0].no, 2);
  EXPECT_THAT(reconciled(id), HasSubstr("(a tie keeps the replacement)"));
}

TEST_F(BrainReconcile, AStaleCopyOfUnknownProgressKeepsTheReplacement) {
  JobId id = submit(make_job().backoff(0));  // a job that reports no steps
  site_launches_all("alpha");
  AttemptRow stale = last_attempt(id);
  site_goes_dark("alpha");
  site_launches_all("beta");
  handle(SiteReachable{"alpha"});
  observe(stale, RunPhase::running);

  EXPECT_TRUE(attempts(id).at(0).cancel_requested);
  ASSERT_EQ(carrying(id).size(), 1u);
  EXPECT_EQ(carrying(id)[0].cluster, "beta");
  EXPECT_THAT(reconciled(id), HasSubstr("(the stale copy's progress is unknown)"));
}

TEST_F(BrainReconcile, AReplacementStillLaunchingLosesToAStaleCopyThatGotFurther) {
  JobId id = submit(make_job().backoff(0));
  AttemptRow stale = stale_after_failover(id);
  EXPECT_EQ(job(id).state, JobState::placed);
  OutboxRow launch = outbox("beta").at(0);

  handle(SiteReachable{"alpha"});
  train(stale, 31, 35);

  EXPECT_EQ(attempts(id).at(0).state, AttemptState::running);
  EXPECT_TRUE(attempts(id).at(1).cancel_requested);
  EXPECT_EQ(job(id).state, JobState::running);
  EXPECT_EQ(reconciled(id),
            "duplicate: attempt 1 on alpha kept running while alpha was unreachable and is at "
            "step 35; cancelling attempt 2 on beta still launching, resuming from step 30");

  // The beta worker skips the launch of an attempt already asked to stop.
  handle(LaunchCompleted{launch.id, launch.token,
                         make_error(ErrorKind::conflict, "cancelled before it was launched"),
                         false});
  EXPECT_EQ(attempts(id).at(1).cause, ExitCause::cancelled);
  EXPECT_EQ(attempts(id).size(), 2u);
  EXPECT_EQ(job(id).state, JobState::running);
  ASSERT_EQ(carrying(id).size(), 1u);
  EXPECT_EQ(carrying(id)[0].no, 1);
}

TEST_F(BrainReconcile, AReplacementStillLaunchingFromWhereTheStaleCopyStoodKeepsTheJob) {
  JobId id = submit(make_job().backoff(0));
  AttemptRow stale = stale_after_failover(id);
  handle(SiteReachable{"alpha"});
  observe(stale, RunPhase::running);  // no step past 30, where the replacement resumes

  EXPECT_TRUE(attempts(id).at(0).cancel_requested);
  EXPECT_FALSE(attempts(id).at(1).cancel_requested);
  EXPECT_EQ(job(id).state, JobState::placed);
  EXPECT_THAT(reconciled(id), HasSubstr("attempt 2 on beta is still launching, resuming from "
                                        "step 30 and keeps the job"));
}

TEST_F(BrainReconcile, AQueuedStaleCopyNeverDisplacesALiveReplacement) {
  JobId id = submit(make_job().backoff(0));
  AttemptRow stale = stale_after_failover(id);
  site_launches_all("beta");
  train(last_attempt(id), 31, 35);
  handle(SiteReachable{"alpha"});
  // Requeued by its site after printing steps up to 50: it would start again from step 0.
  std::vector<ProgressLine> lines;
  for (int s = 31; s <= 50; ++s) lines.push_back(ProgressReport{s, 1000, 0.5, std::nullopt});
  observe(stale, RunPhase::queued, lines);

  EXPECT_TRUE(attempts(id).at(0).cancel_requested);
  ASSERT_EQ(carrying(id).size(), 1u);
  EXPECT_EQ(carrying(id)[0].no, 2);
  EXPECT_THAT(reconciled(id), HasSubstr("attempt 1 on alpha is queued again at alpha"));
}

TEST_F(BrainReconcile, StaleCopyFoundAfterTheJobFinishedIsCancelled) {
  JobId id = submit(make_job().backoff(0));
  AttemptRow stale = stale_after_failover(id);
  site_launches_all("beta");
  train(last_attempt(id), 31, 100);
  exits(last_attempt(id), 0);
  ASSERT_EQ(job(id).state, JobState::succeeded);

  handle(SiteReachable{"alpha"});
  train(stale, 31, 200);  // further, but the job is done
  EXPECT_TRUE(attempts(id).at(0).cancel_requested);
  EXPECT_EQ(attempts(id).at(0).state, AttemptState::exited);
  EXPECT_EQ(job(id).state, JobState::succeeded);
  EXPECT_TRUE(carrying(id).empty());
  EXPECT_THAT(reconciled(id), HasSubstr("but the job is already succeeded; cancelling it"));
}

TEST_F(BrainReconcile, StaleCopyFoundAfterTheUserCancelledIsCancelled) {
  JobId id = submit(make_job().backoff(5));
  site_launches_all("alpha");
  AttemptRow stale = last_attempt(id);
  train(stale, 1, 30);
  site_goes_dark("alpha");
  ASSERT_EQ(attempts(id).at(0).cause, ExitCause::site_down);
  handle(CancelJob{id});

  handle(SiteReachable{"alpha"});
  train(stale, 31, 40);
  EXPECT_TRUE(attempts(id).at(0).cancel_requested);
  EXPECT_EQ(job(id).state, JobState::cancelled);
  EXPECT_THAT(reconciled(id), HasSubstr("already cancelled"));
}

// The job may run only on alpha and fills it, so nothing can replace the stale copy.
class BrainReconcileAlone : public BrainReconcile {
 protected:
  JobId submit_filling_alpha() {
    return submit(make_job().on({"alpha"}).nodes(2).gpus(4).backoff(0));
  }
};

TEST_F(BrainReconcileAlone, WithNoReplacementYetTheStaleCopyIsReinstatedAndTheResumeDropped) {
  JobId id = submit_filling_alpha();
  site_launches_all("alpha");
  AttemptRow stale = last_attempt(id);
  train(stale, 1, 30);
  site_goes_dark("alpha");
  ASSERT_EQ(job(id).state, JobState::resuming);
  handle(SiteReachable{"alpha"});
  ASSERT_EQ(attempts(id).size(), 1u) << "its GPUs count as used until alpha says otherwise";

  train(stale, 31, 40);
  AttemptRow back = attempts(id).at(0);
  EXPECT_EQ(back.state, AttemptState::running);
  EXPECT_EQ(back.cause, ExitCause::none);
  EXPECT_FALSE(back.site_done);
  JobRow j = job(id);
  EXPECT_EQ(j.state, JobState::running);
  EXPECT_FALSE(j.next_attempt_ms.has_value());
  EXPECT_EQ(j.reason, "");
  EXPECT_TRUE(outbox("alpha").empty());
  EXPECT_EQ(reconciled(id),
            "attempt 1 on alpha kept running while alpha was unreachable and is at step 40, and "
            "no other attempt had started; it carries the job again and the pending resume is "
            "dropped");

  clock.advance_ms(30'000);  // within the hang limit (60 s after the last progress line)
  handle(Tick{});
  EXPECT_EQ(attempts(id).size(), 1u);
  exits(attempts(id).at(0), 0);
  EXPECT_EQ(job(id).state, JobState::succeeded);
}

TEST_F(BrainReconcileAlone, AQueuedStaleCopyThatResumesFromTheLatestCheckpointKeepsItsPlace) {
  JobId id = submit_filling_alpha();
  OutboxRow launch = outbox("alpha").at(0);
  handle(LaunchCompleted{launch.id, launch.token, LaunchResult{"4242", {}}, false});
  AttemptRow stale = last_attempt(id);
  site_goes_dark("alpha");  // still queued at the site when it went dark
  ASSERT_EQ(job(id).state, JobState::resuming);
  handle(SiteReachable{"alpha"});

  observe(stale, RunPhase::queued);
  EXPECT_EQ(attempts(id).at(0).state, AttemptState::launching);
  EXPECT_EQ(job(id).state, JobState::placed);
  EXPECT_THAT(reconciled(id), HasSubstr("keeping its place in the queue"));

  observe(stale, RunPhase::running);
  EXPECT_EQ(attempts(id).at(0).state, AttemptState::running);
  EXPECT_EQ(job(id).state, JobState::running);
  EXPECT_EQ(attempts(id).size(), 1u);
}

TEST_F(BrainReconcileAlone, AQueuedStaleCopyThatWouldResumeFromAnOlderCheckpointIsCancelled) {
  JobId id = submit_filling_alpha();
  site_launches_all("alpha");
  AttemptRow stale = last_attempt(id);
  train(stale, 1, 30);
  site_goes_dark("alpha");
  handle(SiteReachable{"alpha"});

  observe(stale, RunPhase::queued);  // requeued by its site: it would start from scratch
  EXPECT_TRUE(attempts(id).at(0).cancel_requested);
  EXPECT_EQ(job(id).state, JobState::resuming);
  EXPECT_THAT(reconciled(id), HasSubstr("would resume from the beginning while the job has a "
                                        "checkpoint at step 30"));

  exits(stale, std::nullopt, 15);  // gone: its GPUs are free
  handle(Tick{});
  ASSERT_EQ(attempts(id).size(), 2u);
  EXPECT_EQ(last_attempt(id).resumed_from_step, 30);
  EXPECT_LE(carrying(id).size(), 1u);
}

}  // namespace
}  // namespace orch::testing
