// Queue-aware failover (issue 18): an attempt the site still queues (Slurm PENDING, Kubernetes
// unschedulable) past its job's max_queue_s moves to a cluster that can run it now, without
// spending a restart; it stays when no other cluster can. The site's part is played with events.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class BrainQueueFailover : public BrainFixture {
 protected:
  void SetUp() override { start({make_cluster("alpha"), make_cluster("beta")}); }

  // The site takes the launch but only queues it (another tenant holds its nodes).
  void alpha_queues(const AttemptRow& a) {
    for (const auto& o : outbox("alpha")) {
      if (o.kind != ActionKind::launch || o.token != a.token) continue;
      handle(LaunchCompleted{o.id, o.token, LaunchResult{"site-" + o.token, {}}, false});
    }
    observe(a, RunPhase::queued);
  }
};

TEST_F(BrainQueueFailover, AnAttemptQueuedPastMaxQueueMovesToAClusterThatCanRunItNow) {
  JobId id = submit(make_job().gpus(4).prefer({"alpha"}).max_queue_s(20));
  const AttemptRow queued = last_attempt(id);
  ASSERT_EQ(queued.cluster, "alpha");
  alpha_queues(queued);

  clock.advance_ms(19'000);
  handle(Tick{});
  EXPECT_EQ(attempts(id).size(), 1u) << "within max_queue_s it waits at alpha";

  clock.advance_ms(1'000);
  handle(Tick{});  // moves it
  handle(Tick{});  // places its job again
  const auto list = attempts(id);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].cause, ExitCause::queue_timeout);
  EXPECT_TRUE(list[0].cancel_requested) << "alpha is asked to drop it from its queue";
  EXPECT_EQ(list[1].cluster, "beta");
  const JobRow job = *store->job(id).value();
  EXPECT_EQ(job.infra_restarts, 0);
  EXPECT_EQ(job.user_restarts, 0);
  bool said = false;
  for (const auto& e : store->events_of(id).value()) {
    if (e.kind == "moved") {
      said = true;
      EXPECT_THAT(e.message,
                  HasSubstr("queued at alpha for 20 s (max_queue_s 20); beta can run it now"));
    }
  }
  EXPECT_TRUE(said);
}

TEST_F(BrainQueueFailover, ItStaysQueuedWhenNoOtherClusterCanRunItOrWhenMaxQueueIsZero) {
  JobId filler = submit(make_job().gpus(4).nodes(2).on({"beta"}));  // beta is full
  site_launches_all("beta");
  JobId id = submit(make_job().gpus(4).prefer({"alpha"}).max_queue_s(20));
  alpha_queues(last_attempt(id));
  JobId never = submit(make_job().gpus(4).on({"alpha"}).max_queue_s(0));
  alpha_queues(last_attempt(never));
  clock.advance_ms(60'000);
  handle(Tick{});
  EXPECT_EQ(attempts(id).size(), 1u) << "beta has no room: better alpha's queue than ours";
  EXPECT_EQ(last_attempt(id).state, AttemptState::launching);

  // Room at beta: the first moves; the one with max_queue_s 0 never does.
  exits(last_attempt(filler), 0);
  handle(Tick{});
  handle(Tick{});
  ASSERT_EQ(attempts(id).size(), 2u);
  EXPECT_EQ(last_attempt(id).cluster, "beta");
  EXPECT_EQ(attempts(never).size(), 1u);
}

// Free capacity at a shared site comes from the site too (Slurm: sinfo's GPUs in use): GPUs
// other tenants hold are not offered, so a job goes where it can run rather than queue there.
class BrainSharedSite : public BrainQueueFailover {
 protected:
  // alpha's site lists both its nodes (4 GPUs each) with these GPUs busy, anyone's jobs.
  void alpha_reports_busy(int n0, int n1) {
    handle(InventoryObserved{"alpha",
                             {{{"alpha-n0", 4, true, "", n0}, {"alpha-n1", 4, true, "", n1}}}});
  }
  std::string verdict_at(JobId id, const std::string& cluster) {
    for (const auto& v : store->verdicts_of(id).value()) {
      if (v.cluster == cluster) return v.reason;
    }
    return "(no verdict)";
  }
};

TEST_F(BrainSharedSite, GpusAnotherTenantHoldsSendAJobToAClusterThatCanRunItNow) {
  alpha_reports_busy(4, 2);
  JobId id = submit(make_job().gpus(4).prefer({"alpha"}));
  EXPECT_EQ(last_attempt(id).cluster, "beta");
  EXPECT_EQ(verdict_at(id, "alpha"),
            "capacity: only 2 of 8 GPUs free, job needs 4 (6 GPU(s) held by other tenants' "
            "jobs)");
}

TEST_F(BrainSharedSite, OurOwnAttemptsTheSiteListsAreNotCountedTwice) {
  JobId first = submit(make_job().gpus(4).on({"alpha"}));
  ASSERT_EQ(last_attempt(first).cluster, "alpha");
  site_launches_all("alpha");
  alpha_reports_busy(4, 0);  // that is our first job
  JobId second = submit(make_job().gpus(4).on({"alpha"}));
  EXPECT_EQ(job(second).state, JobState::placed) << job(second).reason;
}

TEST_F(BrainSharedSite, OurAttemptStillInTheSitesQueueDoesNotHideTheTenant) {
  JobId first = submit(make_job().gpus(4).prefer({"alpha"}));
  ASSERT_EQ(last_attempt(first).cluster, "alpha");
  alpha_queues(last_attempt(first));  // behind the tenant's 4 GPUs, which the site now lists
  alpha_reports_busy(4, 0);
  JobId second = submit(make_job().gpus(4).prefer({"alpha"}));
  EXPECT_EQ(last_attempt(second).cluster, "beta")
      << "alpha: 4 GPUs ours (queued), 4 the tenant's: " << verdict_at(second, "alpha");
}

TEST_F(BrainSharedSite, AJobWaitingForTheTenantIsPlacedWhenTheSiteReportsItGone) {
  alpha_reports_busy(4, 4);
  JobId id = submit(make_job().gpus(4).on({"alpha"}));
  ASSERT_EQ(job(id).state, JobState::pending);
  EXPECT_THAT(job(id).reason, HasSubstr("8 GPU(s) held by other tenants' jobs"));

  clock.advance_ms(1000);
  alpha_reports_busy(0, 4);
  handle(Tick{});
  EXPECT_EQ(job(id).state, JobState::placed);
}

TEST_F(BrainSharedSite, BusyGpusOnNodesPlacementCannotUseDoNotCountTwice) {
  // alpha-n1 is down: its 4 GPUs are out already, whatever the site says is busy there.
  handle(InventoryObserved{"alpha",
                           {{{"alpha-n0", 4, true, "", 0}, {"alpha-n1", 4, false, "down", 4}}}});
  JobId id = submit(make_job().gpus(4).on({"alpha"}));
  EXPECT_EQ(job(id).state, JobState::placed) << job(id).reason;
}

}  // namespace
}  // namespace orch::testing
