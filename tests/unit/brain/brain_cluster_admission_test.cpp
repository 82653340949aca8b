// Clusters as living things (issue 15): a person drains a cluster (no new attempt lands there;
// a running job moves once it has saved a verified checkpoint since the drain), activates it
// again, or retires it (its jobs move at once; it never comes back). The site's part is played
// with events; checkpoints are verified at once (instant_data).
#include <gmock/gmock.h>

#include "scheduler/brain/cluster_history.h"
#include "scheduler/model/launch_request_json.h"
#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class BrainClusterAdmission : public BrainFixture {
 protected:
  void SetUp() override { start({make_cluster("alpha"), make_cluster("beta")}); }

  Result<BrainReply> set(const std::string& cluster, Admission to, const std::string& reason = "") {
    return brain->handle(SetClusterAdmission{cluster, to, reason});
  }
  Admission admission(const std::string& cluster) {
    return store->cluster(cluster).value()->admission;
  }
  std::vector<OutboxRow> actions(const std::string& cluster, ActionKind kind) {
    std::vector<OutboxRow> out;
    for (const auto& a : outbox(cluster)) {
      if (a.kind == kind) out.push_back(a);
    }
    return out;
  }
  // A job on alpha, running, with checkpoints at 10 and 20 verified there.
  JobId running_on_alpha() {
    JobId id = submit(make_job().gpus(4).prefer({"alpha"}).backoff(0));
    site_launches_all("alpha");
    train(last_attempt(id), 1, 20);
    return id;
  }
};

TEST_F(BrainClusterAdmission, ADrainingClusterGetsNoNewAttempt) {
  ASSERT_TRUE(set("alpha", Admission::draining, "maintenance on Tuesday").ok());
  EXPECT_EQ(admission("alpha"), Admission::draining);
  const auto row = store->cluster("alpha").value().value();
  EXPECT_EQ(row.admission_reason, "maintenance on Tuesday");
  EXPECT_EQ(row.admission_ms, clock.now_ms());

  JobId preferring = submit(make_job().gpus(4).prefer({"alpha"}));
  EXPECT_EQ(last_attempt(preferring).cluster, "beta");
  JobId only_alpha = submit(make_job().gpus(4).on({"alpha"}));
  EXPECT_TRUE(attempts(only_alpha).empty());
  EXPECT_THAT(store->job(only_alpha).value()->reason,
              HasSubstr("alpha: admission: cluster is draining: it takes no new work"));

  // Activated again: the waiting job lands there.
  ASSERT_TRUE(set("alpha", Admission::active).ok());
  ASSERT_EQ(attempts(only_alpha).size(), 1u);
  EXPECT_EQ(last_attempt(only_alpha).cluster, "alpha");
}

TEST_F(BrainClusterAdmission, ARunningJobMovesAtItsNextCheckpointWithoutSpendingARestart) {
  JobId id = running_on_alpha();
  clock.advance_ms(1000);
  ASSERT_TRUE(set("alpha", Admission::draining).ok());
  handle(Tick{});
  EXPECT_EQ(carrying(id).at(0).cluster, "alpha") << "checkpoints before the drain do not count";

  clock.advance_ms(1000);
  train(last_attempt(id), 21, 30);  // checkpoint 30, verified at alpha
  handle(Tick{});                   // moves it
  handle(Tick{});                   // places its job again
  const auto list = attempts(id);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].cause, ExitCause::cancelled);
  EXPECT_TRUE(list[0].cancel_requested);
  ASSERT_EQ(actions("alpha", ActionKind::cancel).size(), 1u) << "alpha is asked to stop it";
  EXPECT_EQ(list[1].cluster, "beta");
  EXPECT_EQ(store->job(id).value()->infra_restarts, 0);
  auto moved = events_of_kind(id, "moved");
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].message,
            "attempt 1 on alpha moved: cluster alpha is draining; its checkpoint at step 30 is "
            "verified");
  // It resumes from step 30, copied to beta first.
  const auto launch = actions("beta", ActionKind::launch).at(0);
  const LaunchRequest req = launch_request_from_json(launch.payload).value();
  ASSERT_FALSE(req.resume_candidates.empty());
  EXPECT_EQ(req.resume_candidates[0].step, 30);
}

TEST_F(BrainClusterAdmission, RetiringMovesRunningJobsAtOnceAndIsFinal) {
  JobId id = running_on_alpha();
  ASSERT_TRUE(set("alpha", Admission::retired, "returned to the provider").ok());
  handle(Tick{});  // its job is placed again at the next round
  const auto list = attempts(id);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].cause, ExitCause::cancelled);
  EXPECT_EQ(list[1].cluster, "beta");
  EXPECT_EQ(list[1].resumed_from_step, 20);
  auto moved = events_of_kind(id, "moved");
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_THAT(moved[0].message, HasSubstr("cluster alpha was retired"));

  auto back = set("alpha", Admission::active);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.error().kind, ErrorKind::conflict);
  EXPECT_EQ(back.error().message, "cluster alpha is retired; a retired cluster does not come back");
  EXPECT_EQ(brain->handle(StartBurnIn{"alpha"}).error().kind, ErrorKind::conflict);
  EXPECT_EQ(admission("alpha"), Admission::retired);
}

TEST_F(BrainClusterAdmission, TheStateOutlivesARestart) {
  ASSERT_TRUE(set("alpha", Admission::draining).ok());
  brain = std::make_unique<Brain>(
      *store, clock, std::vector<ClusterSpec>{make_cluster("alpha"), make_cluster("beta")});
  ASSERT_TRUE(brain->start().ok());
  EXPECT_EQ(admission("alpha"), Admission::draining);
}

TEST_F(BrainClusterAdmission, WhatCannotBeDoneIsRefusedWithWhy) {
  auto unknown = set("gamma", Admission::draining);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::not_found);
  auto bad = set("alpha", Admission::burn_in);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::invalid);
  // Draining twice is no change and no error.
  ASSERT_TRUE(set("alpha", Admission::draining).ok());
  ASSERT_TRUE(set("alpha", Admission::draining).ok());
  EXPECT_EQ(brain->handle(StartBurnIn{"alpha"}).error().kind, ErrorKind::conflict);
}

TEST_F(BrainClusterAdmission, AClusterOrderedWithAPromiseWaitsForDeliveryAndSaysHowLateItCame) {
  const Millis promised = clock.now_ms() + 24 * 3'600'000LL;
  start({make_cluster("alpha").promised(promised, "2023-11-15"), make_cluster("beta")});
  EXPECT_EQ(admission("alpha"), Admission::pending_delivery);
  JobId id = submit(make_job().gpus(4).on({"alpha"}));
  EXPECT_THAT(store->job(id).value()->reason, HasSubstr("cluster is not delivered yet"));
  EXPECT_EQ(brain->handle(StartBurnIn{"alpha"}).error().kind, ErrorKind::conflict);

  clock.advance_ms(36 * 3'600'000LL);  // a day and a half later: half a day late
  handle(InventoryObserved{"alpha", SiteInventory{{{"alpha-n0", 4, true, ""}}}});
  EXPECT_EQ(admission("alpha"), Admission::active);
  EXPECT_EQ(store->cluster("alpha").value()->delivered_ms, clock.now_ms());
  handle(Tick{});
  ASSERT_EQ(attempts(id).size(), 1u) << "delivered: it takes work";

  const std::vector<ClusterSpec> clusters = {make_cluster("alpha").promised(promised),
                                             make_cluster("beta")};
  auto in = gather_scorecard_inputs(*store, clusters, clock.now_ms(), 0).value();
  const Scorecard card = compute_scorecards(in).at(0);
  EXPECT_THAT(card.delivery_delay_days, ::testing::Optional(0.5));
  EXPECT_FALSE(card.awaiting_delivery);
}

TEST_F(BrainClusterAdmission, APersonMayActivateAClusterAwaitingDelivery) {
  start({make_cluster("alpha").promised(clock.now_ms()).burn_in_on_join(), make_cluster("beta")});
  ASSERT_TRUE(set("alpha", Admission::active, "racked by hand").ok());
  EXPECT_EQ(admission("alpha"), Admission::pending) << "delivered: it burns in next";
  EXPECT_TRUE(store->cluster("alpha").value()->delivered_ms.has_value());
}

TEST_F(BrainClusterAdmission, ABurningInClusterIsActivatedOnlyByItsRound) {
  start({make_cluster("alpha").burn_in_on_join(), make_cluster("beta")});
  auto early = set("alpha", Admission::active);
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().kind, ErrorKind::conflict);
  EXPECT_THAT(early.error().message, HasSubstr("becomes active when its burn-in round passes"));
  ASSERT_TRUE(set("alpha", Admission::draining).ok());
  EXPECT_EQ(admission("alpha"), Admission::draining);
}

}  // namespace
}  // namespace orch::testing
