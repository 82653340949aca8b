// Hot spares in the brain (issue 38, item 2): a cluster with `spares: N` burns in and holds N idle
// nodes; a gang that loses a node relaunches at once on its survivors and a spare, whose holder
// is cancelled before the launch; the pool refills; a node that fails its burn-in is never used;
// what the spares cost is kept.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class BrainSpares : public BrainFixture {
 protected:
  void SetUp() override { start_with(4); }
  void start_with(int nodes, int spares = 1) {
    start({make_cluster("alpha").nodes(nodes).gpus_per_node(4).spares(spares)});
    SiteInventory inv;
    for (int i = 0; i < nodes; ++i) inv.nodes.push_back({node(i), 4, true, "", 0});
    handle(InventoryObserved{"alpha", inv});
  }
  static std::string node(int i) { return "alpha-n" + std::to_string(i); }

  std::vector<OutboxRow> actions(ActionKind kind) {
    std::vector<OutboxRow> out;
    for (const auto& a : outbox("alpha")) {
      if (a.kind == kind) out.push_back(a);
    }
    return out;
  }
  std::vector<SpareRow> live() { return store->live_spares("alpha").value(); }

  // The pending burn-in round of a spare comes back: passed or failed on its own checks.
  void burn_in_ends(bool passed) {
    auto probes = actions(ActionKind::probe);
    ASSERT_EQ(probes.size(), 1u);
    const auto& probe = probes.front();
    ProbeResult r;
    r.node = probe.payload.at("nodes").at(0).get<std::string>();
    r.ok = passed;
    r.checks = {{"gpu", passed, passed ? "4 GPUs" : "Xid 79: GPU fell off the bus"}};
    r.gemm_gflops = 100;
    handle(ProbeCompleted{probe.id, "alpha", probe.token, std::vector<ProbeResult>{r}});
  }
  // The holder's launch is confirmed and the site reports it running.
  void holder_runs() {
    for (const auto& a : actions(ActionKind::launch)) {
      if (!SparePool::owns(a.token)) continue;
      handle(LaunchCompleted{a.id, a.token, LaunchResult{"h-" + a.token, {}}, false});
      handle(AttemptObserved{"alpha", a.token, RunPhase::running, std::nullopt, {}, {}, {}});
    }
  }
  // One spare, burned in and ready.
  SpareRow ready_spare() {
    handle(Tick{});
    burn_in_ends(true);
    holder_runs();
    auto spares = live();
    EXPECT_EQ(spares.size(), 1u);
    return spares.empty() ? SpareRow{} : spares.front();
  }
  // The job's pending launch runs on these nodes.
  void job_runs_on(JobId id, std::vector<std::string> nodes) {
    for (const auto& a : actions(ActionKind::launch)) {
      if (SparePool::owns(a.token)) continue;
      handle(LaunchCompleted{a.id, a.token, LaunchResult{"j-" + a.token, nodes}, false});
    }
    observe(last_attempt(id), RunPhase::running);
  }
  void loses_node(const AttemptRow& a, const std::string& failed) {
    ExitStatus st;
    st.signal = 9;
    st.node_lost = true;
    st.failed_node = failed;
    st.detail = "NODE_FAIL";
    handle(AttemptObserved{"alpha", a.token, RunPhase::exited, st, {}, {}, {}});
  }
  nlohmann::json launch_of(const AttemptRow& a) {
    for (const auto& o : outbox("alpha")) {
      if (o.token == a.token && o.kind == ActionKind::launch) return o.payload;
    }
    return {};
  }
};

TEST_F(BrainSpares, ASpareIsBurnedInAloneThenHeldByAHolderPinnedToItsNode) {
  handle(Tick{});
  auto spares = live();
  ASSERT_EQ(spares.size(), 1u);
  EXPECT_EQ(spares[0].state, SpareState::burning_in);
  auto probes = actions(ActionKind::probe);
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_EQ(probes[0].payload.at("nodes"), nlohmann::json({spares[0].node}));
  EXPECT_EQ(probes[0].token, spares[0].token + "-b");

  burn_in_ends(true);
  auto holders = actions(ActionKind::launch);
  ASSERT_EQ(holders.size(), 1u);
  EXPECT_EQ(holders[0].token, spares[0].token);
  EXPECT_EQ(holders[0].payload.at("on_node"), spares[0].node);
  EXPECT_EQ(holders[0].payload.at("gpus_per_node"), 4);
  EXPECT_EQ(live().at(0).state, SpareState::holding);

  holder_runs();
  EXPECT_EQ(live().at(0).state, SpareState::ready);
  handle(Tick{});  // one is all it asks for
  EXPECT_EQ(live().size(), 1u);
  EXPECT_TRUE(actions(ActionKind::probe).empty());
}

TEST_F(BrainSpares, NoOtherJobLandsOnASpareOrCountsItsGpusAsFree) {
  SpareRow spare = ready_spare();
  JobId gang = submit(make_job().nodes(3).gpus(4));
  EXPECT_EQ(job(gang).state, JobState::placed);
  EXPECT_THAT(launch_of(last_attempt(gang)).at("exclude_nodes"), Contains(spare.node));
  // The fourth node is the spare's: a one-node job waits.
  JobId other = submit(make_job().nodes(1).gpus(4));
  EXPECT_EQ(job(other).state, JobState::pending);
}

TEST_F(BrainSpares, AGangThatLosesANodeRelaunchesAtOnceOnItsSurvivorsAndTheSpare) {
  SpareRow spare = ready_spare();
  ASSERT_EQ(spare.node, node(0));  // the first idle node
  JobId gang = submit(make_job().nodes(3).gpus(4));
  job_runs_on(gang, {node(1), node(2), node(3)});
  train(last_attempt(gang), 1, 20);

  loses_node(last_attempt(gang), node(2));
  // Placed in the same event: no tick, no backoff for a first node failure.
  ASSERT_EQ(attempts(gang).size(), 2u);
  AttemptRow next = last_attempt(gang);
  auto launch = launch_of(next);
  EXPECT_EQ(launch.at("include_nodes"), nlohmann::json({node(1), node(3), node(0)}));
  EXPECT_THAT(launch.at("exclude_nodes"), Contains(node(2)));
  // The holder is cancelled first: the site frees the spare before the launch asks for it.
  std::int64_t cancel_id = 0;
  std::int64_t launch_id = 0;
  for (const auto& o : outbox("alpha")) {
    if (o.kind == ActionKind::cancel && o.token == spare.token) cancel_id = o.id;
    if (o.kind == ActionKind::launch && o.token == next.token) launch_id = o.id;
  }
  ASSERT_NE(cancel_id, 0);
  EXPECT_LT(cancel_id, launch_id);
  auto taken = store->spare_by_token(spare.token).value();
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->state, SpareState::taken);
  EXPECT_EQ(taken->taken_by, gang);
  auto placed = events_of_kind(gang, "placed");
  EXPECT_THAT(placed.back().message,
              HasSubstr("on hot spare alpha-n0 with its surviving nodes alpha-n1, alpha-n3"));
}

// Two nodes have GPUs enough for a 3-node gang of 2 GPUs each, but not three nodes: it takes
// the spare all the same.
TEST_F(BrainSpares, AGangCountsNodesNotOnlyGpus) {
  SpareRow spare = ready_spare();
  JobId gang = submit(make_job().nodes(3).gpus(2));
  job_runs_on(gang, {node(1), node(2), node(3)});
  loses_node(last_attempt(gang), node(3));
  auto launch = launch_of(last_attempt(gang));
  EXPECT_EQ(launch.at("include_nodes"), nlohmann::json({node(1), node(2), spare.node}));
}

TEST_F(BrainSpares, ThePoolRefillsOnAnotherIdleNodeAfterASpareIsTaken) {
  start_with(5);
  SpareRow spare = ready_spare();
  JobId gang = submit(make_job().nodes(3).gpus(4));
  job_runs_on(gang, {node(1), node(2), node(3)});
  JobId one = submit(make_job().nodes(1).gpus(4));
  job_runs_on(one, {node(4)});
  loses_node(last_attempt(gang), node(2));
  job_runs_on(gang, {node(1), node(3), spare.node});
  // The node the gang lost is the only one idle, and it may be dead before its site says so:
  // not a spare for a minute; then it is burned in (which decides).
  handle(Tick{});
  EXPECT_TRUE(live().empty());
  clock.advance_ms(61'000);
  handle(Tick{});
  auto spares = live();
  ASSERT_EQ(spares.size(), 1u);
  EXPECT_EQ(spares[0].node, node(2));
  EXPECT_EQ(spares[0].state, SpareState::burning_in);
}

TEST_F(BrainSpares, AJobWithRoomEnoughLeavesTheSpareAlone) {
  start_with(5);
  SpareRow spare = ready_spare();
  JobId gang = submit(make_job().nodes(3).gpus(4));
  job_runs_on(gang, {node(1), node(2), node(3)});
  loses_node(last_attempt(gang), node(2));
  auto launch = launch_of(last_attempt(gang));
  EXPECT_FALSE(launch.contains("include_nodes"));
  EXPECT_THAT(launch.at("exclude_nodes"), Contains(spare.node));
  EXPECT_EQ(live().at(0).state, SpareState::ready);
}

TEST_F(BrainSpares, ANodeThatFailsItsBurnInIsTakenOutOfServiceAndNeverUsed) {
  start_with(5);
  handle(Tick{});
  const std::string bad = live().at(0).node;
  burn_in_ends(false);
  EXPECT_TRUE(live().empty());
  EXPECT_TRUE(actions(ActionKind::launch).empty());  // no holder
  auto n = store->node("alpha", bad).value();
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->state, NodeState::quarantined);
  // Jobs never land there, and the next spare is another node, after a pause.
  JobId gang = submit(make_job().nodes(3).gpus(4));
  EXPECT_THAT(launch_of(last_attempt(gang)).at("exclude_nodes"), Contains(bad));
  job_runs_on(gang, {node(1), node(2), node(3)});
  handle(Tick{});
  EXPECT_TRUE(live().empty());
  clock.advance_ms(61'000);
  handle(Tick{});
  ASSERT_EQ(live().size(), 1u);
  EXPECT_EQ(live().at(0).node, node(4));
}

TEST_F(BrainSpares, ASpareWhoseHolderEndsIsLostAndReplacedAfterAPause) {
  SpareRow spare = ready_spare();
  ExitStatus st;
  st.node_lost = true;
  st.detail = "heartbeats stopped";
  handle(AttemptObserved{"alpha", spare.token, RunPhase::exited, st, {}, {}, {}});
  EXPECT_EQ(store->spare_by_token(spare.token).value()->state, SpareState::lost);
  EXPECT_TRUE(live().empty());
  handle(Tick{});
  EXPECT_TRUE(live().empty());
  clock.advance_ms(61'000);
  handle(Tick{});
  EXPECT_EQ(live().size(), 1u);
}

TEST_F(BrainSpares, ADrainingClusterReleasesItsSparesAndTheirCostIsKept) {
  SpareRow spare = ready_spare();
  clock.advance_ms(2 * 3'600'000);
  auto held = store->spare_totals("alpha", clock.now_ms()).value();
  EXPECT_NEAR(held.gpu_hours, 8.0, 1e-6);  // 4 GPUs idle for two hours
  handle(SetClusterAdmission{"alpha", Admission::draining, "maintenance"});
  handle(Tick{});
  EXPECT_TRUE(live().empty());
  bool cancelled = false;
  for (const auto& o : actions(ActionKind::cancel)) cancelled |= o.token == spare.token;
  EXPECT_TRUE(cancelled);
  clock.advance_ms(3'600'000);
  auto after = store->spare_totals("alpha", clock.now_ms()).value();
  EXPECT_NEAR(after.gpu_hours, 8.0, 1e-6);  // released: it costs nothing more
  EXPECT_EQ(after.taken, 0);
}

TEST_F(BrainSpares, AClusterWithoutSparesHoldsNone) {
  start({make_cluster("alpha").nodes(4).gpus_per_node(4)});
  handle(Tick{});
  EXPECT_TRUE(live().empty());
  EXPECT_THAT(outbox("alpha"),
              Not(Contains(::testing::Field(&OutboxRow::kind, ActionKind::probe))));
}

}  // namespace
}  // namespace orch::testing

namespace orch::testing {
namespace {

// The largest gangs ask for spares of their own (resources.spares): the cluster holds them
// while the job runs there, beyond its own, and lets them go when it ends.
class BrainJobSpares : public BrainFixture {};

TEST_F(BrainJobSpares, AJobsOwnSparesAreHeldWhileItRunsAndReleasedAfter) {
  start({make_cluster("alpha").nodes(4).gpus_per_node(4)});
  SiteInventory inv;
  for (int i = 0; i < 4; ++i) inv.nodes.push_back({"alpha-n" + std::to_string(i), 4, true, "", 0});
  handle(InventoryObserved{"alpha", inv});
  JobId id = submit(make_job().nodes(2).gpus(4).spares(1));
  const OutboxRow launch = store->pending_actions("alpha").value().at(0);
  handle(
      LaunchCompleted{launch.id, launch.token, LaunchResult{"j", {"alpha-n0", "alpha-n1"}}, false});
  observe(last_attempt(id), RunPhase::running);
  handle(Tick{});
  auto live = store->live_spares("alpha").value();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].node, "alpha-n2");  // an idle node, not one of the job's

  exits(last_attempt(id), 0);
  EXPECT_EQ(job(id).state, JobState::succeeded);
  handle(Tick{});
  EXPECT_TRUE(store->live_spares("alpha").value().empty());
}

}  // namespace
}  // namespace orch::testing
