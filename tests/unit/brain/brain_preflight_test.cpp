// A cluster configured wrong (docs/health.md, "cluster check"): its failed preflight keeps it out
// of placement, with the reason in its message and in the waiting job's; a launch that meets the
// server's own misconfiguration holds the job in pending without spending a restart; a passing
// preflight lets it take jobs again.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class BrainPreflight : public BrainFixture {
 protected:
  void SetUp() override { start({make_cluster("alpha")}); }

  static PreflightObserved key_missing() {
    return PreflightObserved{"alpha",
                             {check_passed("port", "login:22 answers"),
                              check_failed("key-file", "cannot read /keys/alpha: No such file"),
                              check_skipped("ssh", "key-file")}};
  }
  static PreflightObserved all_pass() {
    return PreflightObserved{"alpha", {check_passed("port", "open"), check_passed("ssh", "ok")}};
  }
  // The site's answer to the pending launch: the server's own configuration is wrong.
  void launch_fails_misconfigured() {
    for (const auto& a : outbox("alpha")) {
      if (a.kind != ActionKind::launch) continue;
      handle(LaunchCompleted{
          a.id, a.token,
          make_error(ErrorKind::misconfigured, "site alpha: cannot read ssh.key_file /keys/alpha"),
          false});
    }
  }
};

TEST_F(BrainPreflight, AFailedPreflightKeepsJobsAwayAndSaysWhy) {
  handle(key_missing());
  EXPECT_EQ(store->cluster("alpha").value()->message,
            "cluster alpha misconfigured: key-file: cannot read /keys/alpha: No such file");

  JobId id = submit(make_job());
  EXPECT_EQ(job(id).state, JobState::pending);
  EXPECT_THAT(job(id).reason, HasSubstr("cluster alpha misconfigured: key-file"));
  EXPECT_TRUE(outbox("alpha").empty());
}

TEST_F(BrainPreflight, APassingPreflightLetsTheClusterTakeTheWaitingJob) {
  handle(key_missing());
  JobId id = submit(make_job());
  ASSERT_TRUE(outbox("alpha").empty());

  handle(all_pass());

  EXPECT_EQ(job(id).state, JobState::placed);
  EXPECT_EQ(outbox("alpha").size(), 1u);
  EXPECT_EQ(store->cluster("alpha").value()->message, "");
}

TEST_F(BrainPreflight, AMisconfiguredLaunchHoldsTheJobPendingWithoutSpendingARestart) {
  JobId id = submit(make_job().infra_restarts(1));
  launch_fails_misconfigured();

  const JobRow held = job(id);
  EXPECT_EQ(held.state, JobState::pending);
  EXPECT_THAT(held.reason, HasSubstr("cluster alpha misconfigured: cannot read ssh.key_file"));
  EXPECT_EQ(held.infra_restarts, 0);
  EXPECT_EQ(attempts(id).at(0).cause, ExitCause::site_misconfigured);
  EXPECT_EQ(events_of_kind(id, "site-misconfigured").size(), 1u);
  // The cluster takes no job until a preflight passes: nothing relaunched, however long.
  clock.advance_ms(600'000);
  handle(Tick{});
  EXPECT_TRUE(outbox("alpha").empty());
  EXPECT_EQ(job(id).state, JobState::pending);
  EXPECT_EQ(attempts(id).size(), 1u);
}

TEST_F(BrainPreflight, RepeatedMisconfiguredLaunchesNeverFailTheJob) {
  JobId id = submit(make_job().infra_restarts(1));
  for (int round = 0; round < 4; ++round) {
    launch_fails_misconfigured();
    handle(all_pass());  // someone "fixed" it; the next launch meets it again
  }
  EXPECT_NE(job(id).state, JobState::failed);
  EXPECT_EQ(job(id).infra_restarts, 0);
  EXPECT_EQ(attempts(id).size(), 5u);
}

TEST_F(BrainPreflight, TheMessageSurvivesTheSiteComingBack) {
  handle(key_missing());
  handle(SiteUnreachable{"alpha", "connection refused"});
  handle(SiteReachable{"alpha"});
  EXPECT_THAT(store->cluster("alpha").value()->message, HasSubstr("misconfigured: key-file"));
}

}  // namespace
}  // namespace orch::testing
