// The brain places submitted jobs and explains why clusters were passed over.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class BrainPlacement : public BrainFixture {
 protected:
  void SetUp() override { start({make_cluster("alpha"), make_cluster("beta")}); }
};

TEST_F(BrainPlacement, SubmitPlacesTheJobAndWritesALaunchToTheOutbox) {
  JobId id = submit(make_job().gpus(2));

  EXPECT_EQ(job(id).state, JobState::placed);
  auto actions = outbox("alpha");
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::launch);
  EXPECT_EQ(actions[0].token, last_attempt(id).token);
  EXPECT_EQ(actions[0].payload["gpus_per_node"], 2);
  EXPECT_TRUE(outbox("beta").empty());
}

TEST_F(BrainPlacement, TokensAreUniquePerAttempt) {
  JobId a = submit(make_job());
  JobId b = submit(make_job());
  EXPECT_NE(last_attempt(a).token, last_attempt(b).token);
}

TEST_F(BrainPlacement, SpreadsLoadToTheClusterWithMoreFreeCapacity) {
  submit(make_job().gpus(4));
  JobId second = submit(make_job().gpus(2));
  EXPECT_EQ(last_attempt(second).cluster, "beta");
}

TEST_F(BrainPlacement, PreferredClusterWinsAmongThoseThatFit) {
  JobId id = submit(make_job().prefer({"beta"}));
  EXPECT_EQ(last_attempt(id).cluster, "beta");
}

TEST_F(BrainPlacement, JobThatFitsNowhereWaitsWithAReasonPerCluster) {
  JobId id = submit_anyway(make_job().nodes(3).gpus(4));  // refused at submit without

  JobRow j = job(id);
  EXPECT_EQ(j.state, JobState::pending);
  EXPECT_THAT(j.reason, HasSubstr("alpha, beta: capacity: job needs 3 nodes, cluster has 2"));
  auto verdicts = store->verdicts_of(id).value();
  ASSERT_EQ(verdicts.size(), 2u);
  for (const auto& v : verdicts) EXPECT_FALSE(v.feasible);
  EXPECT_TRUE(outbox("alpha").empty());
}

TEST_F(BrainPlacement, AFeasibleClustersVerdictReadsBackWithItsScoreBreakdown) {
  // Stored as numbers, made text when read: what job explain and the REST API show.
  JobId id = submit(make_job());
  auto verdicts = store->verdicts_of(id).value();
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_TRUE(verdicts[0].chosen);
  EXPECT_THAT(verdicts[0].reason,
              ::testing::MatchesRegex("goodput=[0-9]\\.[0-9]{3} "
                                      "\\(mfu [01]\\.[0-9]{2}, ettr [01]\\.[0-9]{3}, "
                                      "node mtbf [0-9.]+ h, [0-9.]+ [A-Z]*FLOP/s\\) "
                                      "move-worth=0\\.000 avoid-failed-site=4\\.000 "
                                      "preferred=0\\.000 free-capacity=0\\.[0-9]{3}"));
}

TEST_F(BrainPlacement, WaitingJobIsPlacedWhenCapacityFreesUp) {
  JobId big = submit(make_job().nodes(2).gpus(4).on({"alpha"}));
  JobId waiting = submit(make_job().gpus(4).on({"alpha"}));
  EXPECT_EQ(job(waiting).state, JobState::pending);
  EXPECT_THAT(job(waiting).reason, HasSubstr("only 0 of 8 GPUs free"));

  site_launches_all("alpha");
  exits(last_attempt(big), 0);
  handle(Tick{});

  EXPECT_EQ(job(big).state, JobState::succeeded);
  EXPECT_EQ(job(waiting).state, JobState::placed);
}

TEST_F(BrainPlacement, UnknownAllowedClusterIsRefusedAtSubmit) {
  auto r = brain->handle(SubmitJob{make_job().on({"gamma"})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_THAT(r.error().message,
              HasSubstr("unknown cluster \"gamma\"; configured clusters: alpha, beta"));
}

TEST_F(BrainPlacement, UnhealthySiteGetsNoWork) {
  handle(SiteUnreachable{"alpha", "connection refused"});
  JobId id = submit(make_job());
  EXPECT_EQ(last_attempt(id).cluster, "beta");
  auto verdicts = store->verdicts_of(id).value();
  bool alpha_rejected = false;
  for (const auto& v : verdicts) {
    if (v.cluster == "alpha")
      alpha_rejected = !v.feasible && v.reason == "site-healthy: site is unreachable";
  }
  EXPECT_TRUE(alpha_rejected);
}

TEST_F(BrainPlacement, LaunchConfirmedThenRunningMovesTheJobToRunning) {
  JobId id = submit(make_job());
  site_launches_all("alpha");
  EXPECT_EQ(job(id).state, JobState::running);
  EXPECT_EQ(last_attempt(id).state, AttemptState::running);
  EXPECT_EQ(last_attempt(id).site_job_id, "site-" + last_attempt(id).token);
  EXPECT_TRUE(outbox("alpha").empty());
}

TEST_F(BrainPlacement, LaunchRefusedBySiteIsAnInfraFailureAndTheJobMovesOn) {
  JobId id = submit(make_job().backoff(0));
  auto action = outbox("alpha").at(0);
  handle(LaunchCompleted{action.id, action.token,
                         make_error(ErrorKind::invalid, "no such partition"), false});

  auto all = attempts(id);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].cause, ExitCause::launch_failed);
  EXPECT_EQ(job(id).infra_restarts, 1);
  EXPECT_EQ(job(id).state, JobState::placed);
}

TEST_F(BrainPlacement, AfterAFailedLaunchTheNextAttemptGoesElsewhere) {
  JobId id = submit(make_job().prefer({"alpha"}).backoff(0));
  auto action = outbox("alpha").at(0);
  handle(LaunchCompleted{action.id, action.token, make_error(ErrorKind::io, "disk full"), false});
  EXPECT_EQ(last_attempt(id).cluster, "beta");
}

TEST_F(BrainPlacement, AfterAFailedLaunchTheSameSiteIsStillUsedWhenNothingElseFits) {
  JobId id = submit(make_job().on({"alpha"}).backoff(0));
  auto action = outbox("alpha").at(0);
  handle(LaunchCompleted{action.id, action.token, make_error(ErrorKind::io, "disk full"), false});
  EXPECT_EQ(attempts(id).size(), 2u);
  EXPECT_EQ(last_attempt(id).cluster, "alpha");
}

TEST_F(BrainPlacement, AdoptedLaunchIsRecordedAsAdoptedNotRelaunched) {
  JobId id = submit(make_job());
  auto action = outbox("alpha").at(0);
  handle(LaunchCompleted{action.id, action.token, LaunchResult{"4242", {}}, true});
  EXPECT_EQ(attempts(id).size(), 1u);
  EXPECT_EQ(last_attempt(id).site_job_id, "4242");
  EXPECT_THAT(event_kinds(id), ::testing::Contains("adopted"));
  EXPECT_TRUE(outbox("alpha").empty());
}

}  // namespace
}  // namespace orch::testing
