// The hardware lottery in the brain (issue 15): a lemon that kills job after job is quarantined
// by the count of jobs it killed, not by the clock; the scorecard's restart figures split into
// detection and recovery, worked by hand with the fake clock.
#include <gmock/gmock.h>

#include "scheduler/brain/cluster_history.h"
#include "scheduler/model/launch_request_json.h"
#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;

class BrainLemon : public BrainFixture {
 protected:
  void SetUp() override { start({make_cluster("alpha").nodes(2)}); }

  void inventory(std::vector<NodeInfo> nodes) {
    handle(InventoryObserved{"alpha", SiteInventory{std::move(nodes)}});
  }
  NodeRow node(const std::string& name) { return store->node("alpha", name).value().value(); }
  // The job's pending attempt is launched on `on` and runs.
  AttemptRow launch_on(JobId id, const std::string& on) {
    const AttemptRow a = last_attempt(id);
    for (const auto& o : outbox("alpha")) {
      if (o.kind != ActionKind::launch || o.token != a.token) continue;
      handle(LaunchCompleted{o.id, o.token, LaunchResult{"site-" + o.token, {on}}, false});
      handle(AttemptObserved{"alpha", o.token, RunPhase::running, std::nullopt, {on}, {}, {}});
    }
    return last_attempt(id);
  }
  // The attempt's node dies under it: Slurm ends the job NODE_FAIL.
  void node_fails_under(const AttemptRow& a) {
    ExitStatus lost;
    lost.signal = 9;
    lost.detail = "NODE_FAIL";
    lost.node_lost = true;
    handle(AttemptObserved{"alpha", a.token, RunPhase::exited, lost, {}, {}, {}});
  }
  std::vector<std::string> excluded_by_next_launch() {
    for (const auto& a : outbox("alpha")) {
      if (a.kind == ActionKind::launch) {
        return launch_request_from_json(a.payload).value().exclude_nodes;
      }
    }
    return {"(no launch)"};
  }
};

TEST_F(BrainLemon, TwoJobsKilledMinutesApartAreTwoFailuresAndQuarantineTheNode) {
  inventory({{"lemon", 4, true, ""}, {"good", 4, true, ""}});
  JobId first = submit(make_job().gpus(4).backoff(0));
  node_fails_under(launch_on(first, "lemon"));
  EXPECT_EQ(node("lemon").state, NodeState::active);

  clock.advance_ms(60'000);  // a minute later, another job dies on it
  launch_on(first, "good");  // its retry goes elsewhere
  JobId second = submit(make_job().gpus(4).backoff(0));
  node_fails_under(launch_on(second, "lemon"));

  NodeRow lemon = node("lemon");
  EXPECT_EQ(lemon.state, NodeState::quarantined);
  EXPECT_THAT(lemon.state_reason, HasSubstr("2 failures within 7 days"));
  // No further attempt on it: the second job waits for the good node, then goes there.
  EXPECT_THAT(store->events_of(second).value().back().message,
              HasSubstr("waiting for capacity: alpha: capacity: only 0 of 8 GPUs free, job needs "
                        "4 (quarantined node: lemon)"));
  exits(last_attempt(first), 0);
  handle(Tick{});
  EXPECT_THAT(excluded_by_next_launch(), ElementsAre("lemon"));
}

TEST_F(BrainLemon, ANodeFailFirstAndTheSiteMarkingItDownAfterAreOneFailure) {
  inventory({{"lemon", 4, true, ""}, {"good", 4, true, ""}});
  JobId id = submit(make_job().gpus(4).backoff(0));
  node_fails_under(launch_on(id, "lemon"));
  clock.advance_ms(5'000);
  inventory({{"lemon", 4, false, "down: Not responding"}, {"good", 4, true, ""}});
  EXPECT_EQ(node("lemon").state, NodeState::active);
  auto rows = store->node_events("alpha", "lemon", 10).value();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kind, "node-unhealthy");
  EXPECT_EQ(rows[0].incident, rows[1].incident);
  EXPECT_EQ(rows[1].incident, "job " + std::to_string(id) + " attempt 1");
}

TEST_F(BrainLemon, ADownEpisodeAfterTheNodeCameBackIsASecondFailure) {
  inventory({{"lemon", 4, true, ""}, {"good", 4, true, ""}});
  JobId id = submit(make_job().gpus(4).backoff(0));
  node_fails_under(launch_on(id, "lemon"));
  clock.advance_ms(5'000);
  inventory({{"lemon", 4, false, "down: Not responding"}, {"good", 4, true, ""}});
  clock.advance_ms(5'000);
  inventory({{"lemon", 4, true, ""}, {"good", 4, true, ""}});  // rebooted
  clock.advance_ms(5'000);
  inventory({{"lemon", 4, false, "down: Not responding"}, {"good", 4, true, ""}});
  EXPECT_EQ(node("lemon").state, NodeState::quarantined);
}

TEST_F(BrainLemon, RestartFiguresSplitIntoDetectionAndRecovery) {
  const Millis t0 = clock.now_ms();
  JobId id = submit(make_job().gpus(4).backoff(0));
  AttemptRow a = launch_on(id, "good");  // running at t0
  clock.advance_ms(10'000);
  train(a, 1, 10);           // its last progress line, at t0 + 10 s
  clock.advance_ms(30'000);  // the node died at about t0 + 12 s; the site says so at t0 + 40 s
  node_fails_under(a);
  EXPECT_THAT(attempts(id).at(0).last_alive_ms, Optional(t0 + 10'000));
  clock.advance_ms(15'000);  // the next attempt runs at t0 + 55 s
  launch_on(id, "good");

  const std::vector<ClusterSpec> clusters = {make_cluster("alpha").nodes(2)};
  ScorecardInputs in = gather_scorecard_inputs(*store, clusters, clock.now_ms(), 0).value();
  Scorecard card = compute_scorecards(in).at(0);
  EXPECT_THAT(card.detection_median_s, Optional(30.0));
  EXPECT_THAT(card.detection_p95_s, Optional(30.0));
  EXPECT_THAT(card.recovery_median_s, Optional(15.0));
  EXPECT_THAT(card.recovery_p95_s, Optional(15.0));
  // Placement's restart cost is their sum.
  EXPECT_THAT(cluster_histories(in).at("alpha").restart_s, Optional(45.0));
}

}  // namespace
}  // namespace orch::testing
