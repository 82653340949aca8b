// Resume: infra failures resume from the latest checkpoint (elsewhere when the site is gone),
// user failures spend the user budget, and budgets run out.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class BrainResume : public BrainFixture {
 protected:
  void SetUp() override {
    start({make_cluster("alpha").grace_s(30), make_cluster("beta").grace_s(30)});
  }
};

TEST_F(BrainResume, SiteSilentWithinGraceKeepsTheJob) {
  JobId id = submit(make_job());
  site_launches_all("alpha");
  handle(SiteUnreachable{"alpha", "connection refused"});
  clock.advance_ms(29'000);
  handle(Tick{});

  EXPECT_EQ(job(id).state, JobState::running);
  EXPECT_EQ(attempts(id).size(), 1u);
  EXPECT_EQ(store->cluster("alpha").value()->health, SiteHealth::unreachable);
}

TEST_F(BrainResume, SiteSilentPastGraceResumesFromLatestCheckpointOnAnotherSite) {
  JobId id = submit(make_job().backoff(2));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 47, /*every=*/10);

  handle(SiteUnreachable{"alpha", "connection refused"});
  clock.advance_ms(30'000);
  handle(Tick{});

  AttemptRow first = attempts(id).at(0);
  EXPECT_EQ(first.cause, ExitCause::site_down);
  EXPECT_EQ(job(id).infra_restarts, 1);
  EXPECT_EQ(job(id).user_restarts, 0);
  // Which checkpoint, and where: a job resumes only from a copy at the site it is placed on.
  auto resuming = events_of_kind(id, "resuming");
  ASSERT_EQ(resuming.size(), 1u);
  EXPECT_EQ(resuming[0].message,
            "resuming in 0.0s (site_down: infra restart 1 of 10) from the newest checkpoint with "
            "a good copy where it is placed: step 40 at alpha and beta");

  // The first infra failure after progress waits no backoff: placed in the same event.
  AttemptRow second = last_attempt(id);
  EXPECT_EQ(second.no, 2);
  EXPECT_EQ(second.cluster, "beta");
  EXPECT_EQ(second.resumed_from_step, 40);
  auto launch = outbox("beta").at(0);
  // From beta's own copy of it, replicated while alpha was up (alpha's path means nothing there).
  EXPECT_EQ(launch.payload["env"]["ORCH_RESUME_FROM"],
            "/checkpoints/.orchestrate/replicas/job-1/step-40/step-40");
  EXPECT_EQ(attempts(id).at(0).steps_lost, 7);
}

TEST_F(BrainResume, KilledBySignalResumesOnTheSameHealthySite) {
  JobId id = submit(make_job().backoff(0));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 25);
  exits(last_attempt(id), std::nullopt, 9);

  AttemptRow second = last_attempt(id);
  EXPECT_EQ(attempts(id).at(0).cause, ExitCause::killed_by_signal);
  EXPECT_EQ(second.cluster, "alpha");
  EXPECT_EQ(second.resumed_from_step, 20);
  EXPECT_EQ(job(id).infra_restarts, 1);
}

// After a node failure the job may stay on its cluster, but never on the node that failed.
TEST_F(BrainResume, NodeLostOnAOneNodeClusterMovesTheJobElsewhere) {
  start({make_cluster("alpha").nodes(1).gpus_per_node(1), make_cluster("beta")});
  JobId id = submit(make_job().backoff(0).prefer({"alpha"}));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 25);
  ExitStatus lost;
  lost.node_lost = true;
  lost.detail = "NODE_FAIL";
  handle(AttemptObserved{"alpha", last_attempt(id).token, RunPhase::exited, lost, {}, {}, {}});

  EXPECT_EQ(attempts(id).at(0).cause, ExitCause::node_lost);
  AttemptRow second = last_attempt(id);
  EXPECT_EQ(second.cluster, "beta") << "alpha's only node failed";
  EXPECT_EQ(second.resumed_from_step, 20);
  std::string alpha_verdict;
  for (const auto& v : store->verdicts_of(id).value()) {
    if (v.cluster == "alpha") alpha_verdict = v.reason;
  }
  EXPECT_THAT(alpha_verdict, HasSubstr("unusable node: alpha-n0"));
}

TEST_F(BrainResume, NodeLostOnABiggerClusterStaysThereAndExcludesTheNode) {
  start({make_cluster("gamma").nodes(2).gpus_per_node(1)});
  JobId id = submit(make_job().gpus(1).backoff(0).on({"gamma"}));
  site_launches_all("gamma");  // on gamma-n0
  ExitStatus lost;
  lost.node_lost = true;
  handle(AttemptObserved{"gamma", last_attempt(id).token, RunPhase::exited, lost, {}, {}, {}});

  AttemptRow second = last_attempt(id);
  EXPECT_EQ(second.cluster, "gamma");
  auto launch = outbox("gamma").at(0);
  EXPECT_EQ(launch.payload["exclude_nodes"], nlohmann::json::array({"gamma-n0"}));
}

TEST_F(BrainResume, NodesTheInventoryReportsUnhealthyAreExcludedAndCountedOut) {
  start({make_cluster("alpha").nodes(1).gpus_per_node(1)});
  handle(InventoryObserved{"alpha", {{{"alpha-n0", 1, false, "drained: Xid 79"}}}});
  JobId id = submit(make_job().on({"alpha"}));
  EXPECT_EQ(job(id).state, JobState::pending);
  EXPECT_THAT(job(id).reason, HasSubstr("unusable node: alpha-n0"));

  handle(InventoryObserved{"alpha", {{{"alpha-n0", 1, true, ""}}}});
  handle(Tick{});
  EXPECT_EQ(job(id).state, JobState::placed);
  EXPECT_EQ(outbox("alpha").at(0).payload["exclude_nodes"], nlohmann::json::array());
}

TEST_F(BrainResume, ShellReportedSigkillCountsAsInfra) {
  JobId id = submit(make_job().backoff(0));
  site_launches_all("alpha");
  exits(last_attempt(id), 137);
  EXPECT_EQ(attempts(id).at(0).cause, ExitCause::killed_by_signal);
  EXPECT_EQ(job(id).infra_restarts, 1);
}

TEST_F(BrainResume, UserErrorSpendsTheUserBudgetThenFails) {
  JobId id = submit(make_job().user_restarts(1).backoff(0));
  site_launches_all("alpha");
  exits(last_attempt(id), 3);
  EXPECT_EQ(job(id).user_restarts, 1);
  EXPECT_EQ(job(id).infra_restarts, 0);
  EXPECT_EQ(attempts(id).size(), 2u);

  site_launches_all("alpha");
  exits(last_attempt(id), 3);
  EXPECT_EQ(job(id).state, JobState::failed);
  EXPECT_THAT(job(id).reason, HasSubstr("user restart budget spent (1 of 1)"));
}

TEST_F(BrainResume, InfraFailuresNeverSpendTheUserBudget) {
  JobId id = submit(make_job().user_restarts(0).infra_restarts(2).backoff(0));
  for (int i = 0; i < 2; ++i) {
    site_launches_all(last_attempt(id).cluster);
    exits(last_attempt(id), std::nullopt, 9);
  }
  EXPECT_EQ(job(id).state, JobState::placed);
  site_launches_all(last_attempt(id).cluster);
  exits(last_attempt(id), std::nullopt, 9);
  EXPECT_EQ(job(id).state, JobState::failed);
  EXPECT_THAT(job(id).reason,
              HasSubstr("infra restart budget spent (2 of 2 restarts in a row without progress)"));
}

TEST_F(BrainResume, BackoffGrowsWithEachRestart) {
  JobId id = submit(make_job().backoff(1, 600, 3));
  site_launches_all("alpha");
  exits(last_attempt(id), std::nullopt, 9);
  EXPECT_EQ(last_attempt(id).no, 2) << "the first infra failure waits nothing: placed in the "
                                       "event that ended attempt 1";
  site_launches_all("alpha");
  exits(last_attempt(id), std::nullopt, 9);
  EXPECT_EQ(*job(id).next_attempt_ms, clock.now_ms() + 1000);
  clock.advance_ms(1000);
  handle(Tick{});
  site_launches_all("alpha");
  exits(last_attempt(id), std::nullopt, 9);
  EXPECT_EQ(*job(id).next_attempt_ms, clock.now_ms() + 3000);
}

TEST_F(BrainResume, NoCheckpointMeansStartingOverAndEveryStepIsLost) {
  JobId id = submit(make_job().backoff(0));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 9, /*every=*/0);
  exits(last_attempt(id), std::nullopt, 9);
  EXPECT_FALSE(last_attempt(id).resumed_from_step.has_value());
  EXPECT_EQ(attempts(id).at(0).steps_lost, 9);
  EXPECT_EQ(outbox("alpha").back().payload["env"].count("ORCH_RESUME_FROM"), 0u);
}

TEST_F(BrainResume, StaleAttemptFoundRunningAfterTheSiteReturnsIsCancelled) {
  JobId id = submit(make_job().backoff(0));
  site_launches_all("alpha");
  AttemptRow first = last_attempt(id);
  handle(SiteUnreachable{"alpha", "timeout"});
  clock.advance_ms(30'000);
  handle(Tick{});
  EXPECT_EQ(last_attempt(id).cluster, "beta");

  handle(SiteReachable{"alpha"});
  handle(AttemptObserved{"alpha", first.token, RunPhase::running, std::nullopt, {}, {}, {}});

  auto actions = outbox("alpha");
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::cancel);
  EXPECT_EQ(actions[0].token, first.token);
  EXPECT_EQ(store->cluster("alpha").value()->health, SiteHealth::healthy);
}

TEST_F(BrainResume, AttemptsOnAClusterRemovedFromTheConfigEndAndTheJobMoves) {
  JobId id = submit(make_job().backoff(0));
  site_launches_all("alpha");
  // The server restarts with alpha gone from the clusters file.
  brain = std::make_unique<Brain>(*store, clock, std::vector<ClusterSpec>{make_cluster("beta")});
  ASSERT_TRUE(brain->start().ok());
  EXPECT_EQ(attempts(id).at(0).cause, ExitCause::lost);
  EXPECT_EQ(last_attempt(id).cluster, "beta");
  EXPECT_EQ(job(id).state, JobState::placed);
}

TEST_F(BrainResume, AnEndedAttemptIsWatchedUntilTheSiteConfirmsItGone) {
  JobId id = submit(make_job().backoff(0));
  site_launches_all("alpha");
  handle(SiteUnreachable{"alpha", "timeout"});
  clock.advance_ms(30'000);
  handle(Tick{});
  AttemptRow first = attempts(id).at(0);
  EXPECT_FALSE(first.site_done);
  EXPECT_EQ(store->gpus_in_use().value().at("alpha").held, 1) << "its GPUs may still be in use";
  handle(AttemptObserved{"alpha", first.token, RunPhase::unknown, std::nullopt, {}, {}, {}});
  EXPECT_TRUE(attempts(id).at(0).site_done);
  EXPECT_EQ(store->gpus_in_use().value().count("alpha"), 0u);
}

TEST_F(BrainResume, AttemptTheSiteForgotIsLost) {
  JobId id = submit(make_job().backoff(0));
  site_launches_all("alpha");
  handle(AttemptObserved{
      "alpha", last_attempt(id).token, RunPhase::unknown, std::nullopt, {}, {}, {}});
  EXPECT_EQ(attempts(id).at(0).cause, ExitCause::lost);
  EXPECT_EQ(attempts(id).size(), 2u);
}

TEST_F(BrainResume, UnknownBeforeLaunchConfirmationIsNotALoss) {
  JobId id = submit(make_job());
  handle(AttemptObserved{
      "alpha", last_attempt(id).token, RunPhase::unknown, std::nullopt, {}, {}, {}});
  EXPECT_EQ(last_attempt(id).state, AttemptState::launching);
}

}  // namespace
}  // namespace orch::testing
