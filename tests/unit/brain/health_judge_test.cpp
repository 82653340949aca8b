// The health part on its own: the node ledger and each node's standing, what a site's node list
// records, and which nodes a failure implicates. Rows are written directly; no other part runs.
#include <gmock/gmock.h>

#include "scheduler/brain/health_judge.h"
#include "tests/harness/brain_part_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class HealthJudgeTest : public BrainPartFixture {
 protected:
  void SetUp() override {
    start({make_cluster("alpha").nodes(3).quarantine(2, 24)});
    health = std::make_unique<HealthJudge>(*core);
  }

  NodeRow node(const std::string& name) { return store->node("alpha", name).value().value(); }
  std::vector<NodeEventRow> ledger(const std::string& name) {
    return store->node_events("alpha", name, 100).value();
  }

  std::unique_ptr<HealthJudge> health;
};

TEST_F(HealthJudgeTest, TwoFailuresOfSeparateIncidentsWithinTheWindowQuarantineTheNode) {
  in_transaction([&] { return health->node_event("alpha", "alpha-n1", "gpu-error", "Xid 79"); });
  EXPECT_EQ(node("alpha-n1").state, NodeState::active);
  clock.advance_ms(3'600'000);  // an hour later: another incident
  in_transaction([&] { return health->node_event("alpha", "alpha-n1", "gpu-error", "Xid 79"); });
  EXPECT_EQ(node("alpha-n1").state, NodeState::quarantined);
  EXPECT_EQ(node("alpha-n1").quarantines, 1);
  EXPECT_EQ(node("alpha-n0").state, NodeState::active);
}

TEST_F(HealthJudgeTest, EntriesOfOneDownEpisodeCountOnce) {
  SiteInventory inv;
  inv.nodes = {{"alpha-n0", 4, true, ""}, {"alpha-n1", 4, false, "down: Not responding"}};
  in_transaction([&] { return health->on(InventoryObserved{"alpha", inv}); });
  clock.advance_ms(60'000);  // the job on it fails a minute later, while it is down: the same
  in_transaction([&] { return health->node_event("alpha", "alpha-n1", "node-failure", "lost"); });
  EXPECT_EQ(node("alpha-n1").state, NodeState::active);
  auto entries = ledger("alpha-n1");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].incident, entries[1].incident);
}

TEST_F(HealthJudgeTest, EntriesMinutesApartWithNothingInCommonAreTwoIncidents) {
  in_transaction([&] { return health->node_event("alpha", "alpha-n1", "probe-failed", "slow"); });
  clock.advance_ms(60'000);  // not by the clock: a second, unrelated failure
  in_transaction([&] { return health->node_event("alpha", "alpha-n1", "gpu-error", "Xid 48"); });
  EXPECT_EQ(node("alpha-n1").state, NodeState::quarantined);
}

TEST_F(HealthJudgeTest, ANodeListRecordsOnlyChangesOfHealth) {
  SiteInventory inv;
  inv.nodes = {{"alpha-n0", 4, true, ""},
               {"alpha-n1", 4, false, "NHC: IB link down"},
               {"alpha-n2", 4, true, ""}};
  in_transaction([&] { return health->on(InventoryObserved{"alpha", inv}); });
  in_transaction([&] { return health->on(InventoryObserved{"alpha", inv}); });
  auto entries = ledger("alpha-n1");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].kind, "node-unhealthy");
  EXPECT_THAT(entries[0].message, HasSubstr("NHC: IB link down"));
  EXPECT_TRUE(ledger("alpha-n0").empty());

  inv.nodes.pop_back();  // alpha-n2 is no longer listed
  in_transaction([&] { return health->on(InventoryObserved{"alpha", inv}); });
  EXPECT_FALSE(node("alpha-n2").healthy);
  EXPECT_EQ(node("alpha-n2").reason, "no longer listed by the site");
}

// A listing is compared with what the last one left in the node rows (kept in memory, not read
// again: issue 45's scale goal), and with the rows themselves after an event rolled back.
TEST_F(HealthJudgeTest, AListingIsComparedWithTheRowsAsTheLastCommittedListingLeftThem) {
  auto list = [&](std::vector<NodeInfo> nodes) {
    in_transaction([&] { return health->on(InventoryObserved{"alpha", SiteInventory{nodes}}); });
  };
  const NodeInfo n0{"alpha-n0", 4, true, ""}, n2{"alpha-n2", 4, true, ""};
  list({n0, {"alpha-n1", 4, true, ""}, n2});
  const Millis first = clock.now_ms();
  clock.advance_ms(60'000);
  list({n0, {"alpha-n1", 4, false, "down"}, n2});
  clock.advance_ms(60'000);
  list({n0, {"alpha-n1", 4, false, "down"}});  // alpha-n2 no longer listed
  EXPECT_EQ(ledger("alpha-n1").size(), 1u);
  EXPECT_EQ(node("alpha-n2").reason, "no longer listed by the site");
  EXPECT_EQ(node("alpha-n2").seen_ms, first + 60'000);  // when it was last listed

  // An event that listed alpha-n1 healthy again and then failed: its rows are gone, and so is
  // what the judge kept of them (the brain says so after every event).
  auto failed = store->transaction([&]() -> Result<void> {
    SiteInventory inv{{n0, {"alpha-n1", 4, true, ""}}};
    if (auto r = health->on(InventoryObserved{"alpha", inv}); !r) return r.error();
    return make_error(ErrorKind::internal, "the event failed");
  });
  ASSERT_FALSE(failed.ok());
  health->after_commit(false);
  EXPECT_FALSE(node("alpha-n1").healthy);

  list({n0, {"alpha-n1", 4, true, ""}, n2});
  auto n1_ledger = ledger("alpha-n1");
  ASSERT_EQ(n1_ledger.size(), 2u);
  EXPECT_EQ(n1_ledger[0].kind, "node-healthy");
  EXPECT_EQ(ledger("alpha-n2").front().kind, "node-healthy");
  EXPECT_TRUE(node("alpha-n2").healthy);
  EXPECT_EQ(node("alpha-n2").seen_ms, clock.now_ms());
  EXPECT_TRUE(ledger("alpha-n0").empty());
}

TEST_F(HealthJudgeTest, AnUnknownNodeIsRefusedWithTheClustersNodeNames) {
  auto r = health->on(SetNodeState{"alpha", "alpha-n9", NodeState::quarantined, ""});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::not_found);
  EXPECT_THAT(r.error().message, HasSubstr("alpha-n0, alpha-n1, alpha-n2"));
}

TEST_F(HealthJudgeTest, AHandQuarantineIsNotCountedTowardsRetirement) {
  in_transaction([&] {
    return health->on(SetNodeState{"alpha", "alpha-n0", NodeState::quarantined, "cable"});
  });
  EXPECT_EQ(node("alpha-n0").state, NodeState::quarantined);
  EXPECT_EQ(node("alpha-n0").quarantines, 0);
  EXPECT_EQ(node("alpha-n0").state_reason, "quarantined by hand: cable");
}

TEST_F(HealthJudgeTest, AHangIsNotedOnEveryNodeButCountsAgainstNone) {
  JobRow job = add_job(make_job().nodes(2).gpus(4), JobState::running);
  AttemptRow a = add_attempt(job, "alpha", 1, {"alpha-n0", "alpha-n1"});
  in_transaction([&] { return health->implicate_nodes(a, ExitCause::hang, {}, "silent 600 s"); });
  for (const char* n : {"alpha-n0", "alpha-n1"}) {
    ASSERT_EQ(ledger(n).size(), 1u) << n;
    EXPECT_EQ(ledger(n)[0].kind, "hang-seen");
    EXPECT_THAT(ledger(n)[0].message, HasSubstr("silent 600 s"));
  }
  // The same job hanging again (its deadlock, on its next attempt) is still only noted.
  clock.advance_ms(3'600'000);
  AttemptRow again = add_attempt(job, "alpha", 2, {"alpha-n1"});
  in_transaction([&] { return health->implicate_nodes(again, ExitCause::hang, {}, "silent"); });
  EXPECT_EQ(ledger("alpha-n1")[0].kind, "hang-seen");
  EXPECT_EQ(node("alpha-n1").state, NodeState::active);

  in_transaction(
      [&] { return health->implicate_nodes(a, ExitCause::gpu_error, {"alpha-n1"}, "Xid 48"); });
  ASSERT_EQ(ledger("alpha-n1").size(), 3u) << "two hangs noted, then the GPU error";
  EXPECT_EQ(ledger("alpha-n1")[0].kind, "gpu-error");
  EXPECT_EQ(ledger("alpha-n1")[0].job_id, job.id);
}

TEST_F(HealthJudgeTest, ANodeThatHangsUnderASecondJobIsCountedAndCanBeQuarantined) {
  JobRow first = add_job(make_job().nodes(2).gpus(4), JobState::running);
  AttemptRow a = add_attempt(first, "alpha", 1, {"alpha-n0", "alpha-n1"});
  in_transaction([&] { return health->implicate_nodes(a, ExitCause::hang, {}, "silent"); });
  clock.advance_ms(3'600'000);
  JobRow second = add_job(make_job().nodes(1).gpus(4), JobState::running);
  AttemptRow b = add_attempt(second, "alpha", 1, {"alpha-n1"});
  in_transaction([&] { return health->implicate_nodes(b, ExitCause::hang, {}, "silent"); });
  EXPECT_EQ(ledger("alpha-n1")[0].kind, "hang");
  EXPECT_THAT(ledger("alpha-n1")[0].message, HasSubstr("hung under another job too"));
  EXPECT_EQ(ledger("alpha-n0").size(), 1u) << "alpha-n0 did not hang again";
  EXPECT_EQ(node("alpha-n1").state, NodeState::active) << "one counted failure of the two needed";

  clock.advance_ms(3'600'000);
  JobRow third = add_job(make_job().nodes(1).gpus(4), JobState::running);
  AttemptRow c = add_attempt(third, "alpha", 1, {"alpha-n1"});
  in_transaction([&] { return health->implicate_nodes(c, ExitCause::hang, {}, "silent"); });
  EXPECT_EQ(node("alpha-n1").state, NodeState::quarantined);
}

}  // namespace
}  // namespace orch::testing
