// The node ledger: health changes from the site's inventory, and node failures under a job.
#include <gmock/gmock.h>

#include <algorithm>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class BrainNodes : public BrainFixture {
 protected:
  void SetUp() override { start({make_cluster("alpha"), make_cluster("beta")}); }

  void inventory(std::vector<NodeInfo> nodes) {
    handle(InventoryObserved{"alpha", SiteInventory{std::move(nodes)}});
  }
  // Oldest first, to read in the order things happened.
  std::vector<NodeEventRow> ledger(const std::optional<std::string>& node = std::nullopt) {
    auto rows = store->node_events("alpha", node, 100).value();
    std::reverse(rows.begin(), rows.end());
    return rows;
  }
};

TEST_F(BrainNodes, ANodeFirstSeenUnhealthyIsRecordedAndAHealthyOneIsNot) {
  inventory({{"a1", 4, true, ""}, {"a2", 4, false, "drain: Xid 79 (DRAIN)"}});
  auto rows = ledger();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].node, "a2");
  EXPECT_EQ(rows[0].kind, "node-unhealthy");
  EXPECT_EQ(rows[0].message, "node a2 is unhealthy when first listed: drain: Xid 79 (DRAIN)");
  EXPECT_EQ(rows[0].at_ms, clock.now_ms());
  EXPECT_FALSE(rows[0].job_id.has_value());
}

TEST_F(BrainNodes, HealthChangesAreRecordedOnceAndNothingWhenNothingChanged) {
  inventory({{"a1", 4, true, ""}, {"a2", 4, true, ""}});
  EXPECT_TRUE(ledger().empty());
  clock.advance_ms(1000);
  inventory({{"a1", 4, false, "down: Not responding"}, {"a2", 4, true, ""}});
  inventory({{"a1", 4, false, "down: Not responding"}, {"a2", 4, true, ""}});  // the same again
  ASSERT_EQ(ledger().size(), 1u);
  EXPECT_EQ(ledger()[0].kind, "node-unhealthy");
  EXPECT_EQ(ledger()[0].message, "node a1 turned unhealthy: down: Not responding");

  clock.advance_ms(1000);
  inventory({{"a1", 4, true, ""}, {"a2", 4, true, ""}});
  inventory({{"a1", 4, true, ""}, {"a2", 4, true, ""}});
  auto rows = ledger();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].kind, "node-healthy");
  EXPECT_EQ(rows[1].message, "node a1 is healthy again (was: down: Not responding)");
  EXPECT_TRUE(store->node_events("beta", std::nullopt, 10).value().empty());
}

TEST_F(BrainNodes, ANodeNoLongerListedTurnsUnhealthyOnce) {
  inventory({{"a1", 4, true, ""}, {"a2", 4, true, ""}});
  inventory({{"a1", 4, true, ""}});
  inventory({{"a1", 4, true, ""}});
  auto rows = ledger("a2");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].message, "node a2 turned unhealthy: no longer listed by the site");
  inventory({{"a1", 4, true, ""}, {"a2", 4, true, ""}});
  EXPECT_EQ(ledger("a2").back().kind, "node-healthy");
}

TEST_F(BrainNodes, ANodeLostUnderAJobIsRecordedOnEveryNodeOfTheAttempt) {
  JobId id = submit(make_job().nodes(2).gpus(4).backoff(0));
  OutboxRow launch = outbox("alpha").at(0);
  handle(LaunchCompleted{launch.id, launch.token, LaunchResult{"4242", {"a1", "a2"}}, false});
  AttemptRow a = last_attempt(id);
  train(a, 1, 20);
  ExitStatus st;
  st.signal = 9;
  st.detail = "NODE_FAIL";
  st.node_lost = true;
  handle(AttemptObserved{"alpha", a.token, RunPhase::exited, st, {}, {}, {}});

  EXPECT_EQ(attempts(id).at(0).cause, ExitCause::node_lost);
  auto ended = events_of_kind(id, "attempt-ended");
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].message,
            "attempt 1 on alpha ended: node_lost, signal 9, at step 20, on node(s) a1, a2 "
            "(NODE_FAIL)");
  auto rows = ledger();
  ASSERT_EQ(rows.size(), 2u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].kind, "node-failure");
    EXPECT_EQ(rows[i].job_id, id);
    EXPECT_EQ(rows[i].attempt_no, 1);
    EXPECT_EQ(rows[i].message, "node failure under job " + std::to_string(id) +
                                   " attempt 1 (site job 4242), which ran on a1, a2: NODE_FAIL");
  }
  EXPECT_EQ(rows[0].node, "a1");
  EXPECT_EQ(rows[1].node, "a2");

  // Observed again after the end: nothing more in the ledger.
  handle(AttemptObserved{"alpha", a.token, RunPhase::exited, st, {}, {}, {}});
  EXPECT_EQ(ledger().size(), 2u);
}

TEST_F(BrainNodes, OtherEndsRecordNothingInTheLedger) {
  JobId id = submit(make_job().backoff(0));
  site_launches_all("alpha");
  exits(last_attempt(id), std::nullopt, 9);
  EXPECT_TRUE(ledger().empty());
  EXPECT_THAT(events_of_kind(id, "attempt-ended").at(0).message,
              ::testing::Not(HasSubstr("node(s)")));
}

}  // namespace
}  // namespace orch::testing
