// Health in the brain: quarantine from the node ledger, burn-in rounds, release probes, hangs,
// the MFU watch and log-classified failures. The site's part is played with events.
#include <gmock/gmock.h>

#include <algorithm>

#include "scheduler/health/mfu_watch.h"
#include "scheduler/model/launch_request_json.h"
#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr Millis kDay = 24LL * 3600 * 1000;
constexpr Millis kHour = 3600LL * 1000;

ProbeResult probe(const std::string& node, double gflops, double mb_s = 500) {
  ProbeResult r;
  r.node = node;
  r.ok = true;
  r.gemm_gflops = gflops;
  r.write_mb_s = mb_s;
  r.read_mb_s = mb_s;
  r.raw = R"({"probe":1,"node":")" + node + R"("})";
  return r;
}

class BrainHealth : public BrainFixture {
 protected:
  // Five rank reports over 40 s in which a2's ranks are the slowest.
  void report_slow_a2(const AttemptRow& a, int from_step) {
    std::vector<RankStepTime> ranks = {{0, "a1", 0.50}, {1, "a2", 0.90}, {2, "a3", 0.52}};
    for (int s = from_step; s < from_step + 5; ++s) {
      clock.advance_ms(10'000);
      report(a, {ProgressReport{s, 1000, 0.9, std::nullopt, ranks}});
    }
  }
  void inventory(const std::string& cluster, std::vector<NodeInfo> nodes) {
    handle(InventoryObserved{cluster, SiteInventory{std::move(nodes)}});
  }
  void healthy_nodes(const std::string& cluster, std::vector<std::string> names) {
    std::vector<NodeInfo> nodes;
    for (const auto& n : names) nodes.push_back({n, 4, true, ""});
    inventory(cluster, nodes);
  }
  NodeRow node(const std::string& cluster, const std::string& name) {
    return store->node(cluster, name).value().value();
  }
  std::vector<std::string> ledger_kinds(const std::string& cluster, const std::string& name) {
    auto rows = store->node_events(cluster, name, 100).value();
    std::vector<std::string> kinds;
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) kinds.push_back(it->kind);
    return kinds;
  }
  std::vector<std::string> event_messages(JobId id, const std::string& kind) {
    std::vector<std::string> out;
    for (const auto& e : store->events_of(id).value()) {
      if (e.kind == kind) out.push_back(e.message);
    }
    return out;
  }
  // The site launches every pending attempt on `cluster` on these nodes and reports it running.
  void launch_on(const std::string& cluster, std::vector<std::string> nodes) {
    for (const auto& a : outbox(cluster)) {
      if (a.kind != ActionKind::launch) continue;
      LaunchResult res{"site-" + a.token, nodes, "sbatch --exclude=x"};
      handle(LaunchCompleted{a.id, a.token, res, false});
      handle(AttemptObserved{cluster, a.token, RunPhase::running, std::nullopt, nodes, {}, {}});
    }
  }
  std::vector<OutboxRow> actions(const std::string& cluster, ActionKind kind) {
    std::vector<OutboxRow> out;
    for (const auto& a : outbox(cluster)) {
      if (a.kind == kind) out.push_back(a);
    }
    return out;
  }
  LaunchRequest pending_launch(const std::string& cluster) {
    auto launches = actions(cluster, ActionKind::launch);
    EXPECT_EQ(launches.size(), 1u);
    return launch_request_from_json(launches.at(0).payload).value();
  }
  void node_down_then_up(const std::string& cluster, const std::string& name,
                         const std::string& other) {
    inventory(cluster, {{name, 4, false, "down: Not responding"}, {other, 4, true, ""}});
    clock.advance_ms(kHour);
    inventory(cluster, {{name, 4, true, ""}, {other, 4, true, ""}});
  }
};

// ---- quarantine -------------------------------------------------------------------------

TEST_F(BrainHealth, TwoFailuresWithinAWeekQuarantineTheNodeAndTheNextLaunchExcludesIt) {
  start({make_cluster("alpha")});
  healthy_nodes("alpha", {"a1", "a2"});
  node_down_then_up("alpha", "a1", "a2");
  EXPECT_EQ(node("alpha", "a1").state, NodeState::active);
  clock.advance_ms(2 * kDay);
  node_down_then_up("alpha", "a1", "a2");
  NodeRow a1 = node("alpha", "a1");
  EXPECT_EQ(a1.state, NodeState::quarantined);
  EXPECT_EQ(a1.quarantines, 1);
  EXPECT_THAT(ledger_kinds("alpha", "a1"), Contains("quarantined"));

  submit(make_job().gpus(4).on({"alpha"}));
  EXPECT_THAT(pending_launch("alpha").exclude_nodes, ElementsAre("a1"));
}

TEST_F(BrainHealth, FailuresEightDaysApartDoNotQuarantine) {
  start({make_cluster("alpha")});
  healthy_nodes("alpha", {"a1", "a2"});
  node_down_then_up("alpha", "a1", "a2");
  clock.advance_ms(8 * kDay);
  node_down_then_up("alpha", "a1", "a2");
  EXPECT_EQ(node("alpha", "a1").state, NodeState::active);
}

TEST_F(BrainHealth, OneIncidentLeavingTwoLedgerEntriesIsOneFailure) {
  start({make_cluster("alpha"), make_cluster("beta")});
  healthy_nodes("alpha", {"a1", "a2"});
  JobId id = submit(make_job().gpus(4).on({"alpha", "beta"}).prefer({"alpha"}));
  launch_on("alpha", {"a1"});
  // The site marks the node down, and the job on it ends node_lost: one failure, two entries.
  inventory("alpha", {{"a1", 4, false, "down: Not responding"}, {"a2", 4, true, ""}});
  ExitStatus lost;
  lost.node_lost = true;
  lost.detail = "NODE_FAIL";
  handle(AttemptObserved{"alpha", last_attempt(id).token, RunPhase::exited, lost, {}, {}, {}});
  EXPECT_EQ(node("alpha", "a1").state, NodeState::active);
}

TEST_F(BrainHealth, QuarantineAndReleaseByHandAreLedgerEntriesAndFreeCapacity) {
  start({make_cluster("alpha").nodes(2)});
  healthy_nodes("alpha", {"a1", "a2"});
  handle(SetNodeState{"alpha", "a2", NodeState::quarantined, "cabling"});
  EXPECT_EQ(node("alpha", "a2").state, NodeState::quarantined);
  EXPECT_EQ(node("alpha", "a2").quarantines, 0);  // a person's call does not count to retire
  JobId id = submit(make_job().nodes(2).gpus(4).on({"alpha"}));
  EXPECT_EQ(job(id).state, JobState::pending);

  handle(SetNodeState{"alpha", "a2", NodeState::active, ""});
  EXPECT_EQ(node("alpha", "a2").state, NodeState::active);
  EXPECT_EQ(job(id).state, JobState::placed);
  EXPECT_THAT(ledger_kinds("alpha", "a2"), ElementsAre("quarantined", "released"));
}

TEST_F(BrainHealth, QuarantiningAnUnknownNodeNamesTheNodesThereAre) {
  start({make_cluster("alpha")});
  healthy_nodes("alpha", {"a1", "a2"});
  auto r = brain->handle(SetNodeState{"alpha", "a9", NodeState::quarantined, ""});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::not_found);
  EXPECT_THAT(r.error().message, HasSubstr("a1, a2"));
}

// ---- burn-in ----------------------------------------------------------------------------

TEST_F(BrainHealth, ANewClusterIsBurnedInBeforeItGetsWorkAndItsSlowNodeIsQuarantined) {
  start({make_cluster("alpha").nodes(3).burn_in_on_join()});
  healthy_nodes("alpha", {"a1", "a2", "a3"});
  EXPECT_EQ(store->cluster("alpha").value()->admission, Admission::pending);
  JobId id = submit(make_job().gpus(4).on({"alpha"}));
  EXPECT_EQ(job(id).state, JobState::pending);
  EXPECT_THAT(job(id).reason, HasSubstr("burn-in"));

  handle(Tick{});
  auto probes = actions("alpha", ActionKind::probe);
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_EQ(store->cluster("alpha").value()->admission, Admission::burn_in);
  handle(Tick{});  // one round at a time
  EXPECT_EQ(actions("alpha", ActionKind::probe).size(), 1u);

  handle(ProbeCompleted{
      probes[0].id, "alpha", probes[0].token,
      std::vector<ProbeResult>{probe("a1", 10.0), probe("a2", 4.0), probe("a3", 9.8)}});
  EXPECT_EQ(store->cluster("alpha").value()->admission, Admission::active);
  EXPECT_EQ(node("alpha", "a2").state, NodeState::quarantined);
  EXPECT_THAT(node("alpha", "a2").state_reason, HasSubstr("compute"));
  EXPECT_EQ(node("alpha", "a1").state, NodeState::active);
  auto rows = store->probes("alpha", "", 10).value();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(job(id).state, JobState::placed);
  EXPECT_THAT(pending_launch("alpha").exclude_nodes, ElementsAre("a2"));
}

TEST_F(BrainHealth, BurnInWaitsForTheSitesNodeList) {
  start({make_cluster("alpha").burn_in_on_join()});
  handle(Tick{});
  EXPECT_THAT(actions("alpha", ActionKind::probe), IsEmpty());
  healthy_nodes("alpha", {"a1", "a2"});
  handle(Tick{});
  EXPECT_EQ(actions("alpha", ActionKind::probe).size(), 1u);
}

TEST_F(BrainHealth, AProviderThatCannotProbeIsAdmittedWithoutBurnIn) {
  start({make_cluster("alpha").burn_in_on_join()});
  healthy_nodes("alpha", {"a1"});
  handle(Tick{});
  auto probes = actions("alpha", ActionKind::probe);
  ASSERT_EQ(probes.size(), 1u);
  handle(ProbeCompleted{probes[0].id, "alpha", probes[0].token,
                        make_error(ErrorKind::unsupported, "no probes here")});
  EXPECT_EQ(store->cluster("alpha").value()->admission, Admission::active);
}

TEST_F(BrainHealth, AFailedRoundIsRetriedAfterAMinute) {
  start({make_cluster("alpha").burn_in_on_join()});
  healthy_nodes("alpha", {"a1", "a2"});
  handle(Tick{});
  auto probes = actions("alpha", ActionKind::probe);
  ASSERT_EQ(probes.size(), 1u);
  handle(ProbeCompleted{probes[0].id, "alpha", probes[0].token,
                        make_error(ErrorKind::io, "srun: error: nodes busy")});
  EXPECT_EQ(store->cluster("alpha").value()->admission, Admission::pending);
  EXPECT_EQ(node("alpha", "a1").state, NodeState::active);  // the site's fault, not the node's
  handle(Tick{});
  EXPECT_THAT(actions("alpha", ActionKind::probe), IsEmpty());
  clock.advance_ms(61'000);
  handle(Tick{});
  EXPECT_EQ(actions("alpha", ActionKind::probe).size(), 1u);
}

TEST_F(BrainHealth, AQuarantinedNodeIsProbedAfterTheCooldownAndReleasedWhenItPasses) {
  start({make_cluster("alpha").quarantine(2, 168, 3)});
  healthy_nodes("alpha", {"a1", "a2"});
  node_down_then_up("alpha", "a1", "a2");
  node_down_then_up("alpha", "a1", "a2");
  ASSERT_EQ(node("alpha", "a1").state, NodeState::quarantined);
  handle(Tick{});
  EXPECT_THAT(actions("alpha", ActionKind::probe), IsEmpty());  // cooling down
  clock.advance_ms(2 * kHour + 1);
  handle(Tick{});
  auto probes = actions("alpha", ActionKind::probe);
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_THAT(probe_request_from_json(probes[0].payload).value().nodes, ElementsAre("a1"));
  handle(Tick{});
  EXPECT_EQ(actions("alpha", ActionKind::probe).size(), 1u);  // not twice

  handle(ProbeCompleted{probes[0].id, "alpha", probes[0].token,
                        std::vector<ProbeResult>{probe("a1", 10.0)}});
  EXPECT_EQ(node("alpha", "a1").state, NodeState::active);
  EXPECT_TRUE(node("alpha", "a1").probe_token.empty());
}

TEST_F(BrainHealth, AFailingReleaseProbeKeepsTheNodeOutForAnotherCooldown) {
  start({make_cluster("alpha").quarantine(2, 168, 1)});
  healthy_nodes("alpha", {"a1", "a2"});
  node_down_then_up("alpha", "a1", "a2");
  node_down_then_up("alpha", "a1", "a2");
  clock.advance_ms(kHour + 1);
  handle(Tick{});
  auto probes = actions("alpha", ActionKind::probe);
  ASSERT_EQ(probes.size(), 1u);
  ProbeResult bad = probe("a1", 10.0);
  bad.ok = false;
  bad.checks.push_back({"gpu-ecc", false, "GPU 3: 2 uncorrectable ECC errors"});
  handle(ProbeCompleted{probes[0].id, "alpha", probes[0].token, std::vector<ProbeResult>{bad}});
  EXPECT_EQ(node("alpha", "a1").state, NodeState::quarantined);
  handle(Tick{});
  EXPECT_THAT(actions("alpha", ActionKind::probe), IsEmpty());
}

// ---- hangs ------------------------------------------------------------------------------

TEST_F(BrainHealth, AnAttemptWithoutProgressForHangAfterIsEndedAsHungAndResumed) {
  start({make_cluster("alpha")});
  JobId id = submit(make_job().gpus(4).on({"alpha"}).hang_after_s(60).backoff(1, 1));
  launch_on("alpha", {"a1"});
  train(last_attempt(id), 1, 20);
  clock.advance_ms(59'000);
  handle(Tick{});
  EXPECT_EQ(last_attempt(id).state, AttemptState::running);
  clock.advance_ms(2'000);
  handle(Tick{});
  AttemptRow hung = attempts(id).at(0);
  EXPECT_EQ(hung.state, AttemptState::exited);
  EXPECT_EQ(hung.cause, ExitCause::hang);
  EXPECT_TRUE(hung.cancel_requested);
  EXPECT_EQ(actions("alpha", ActionKind::cancel).size(), 1u);
  EXPECT_EQ(job(id).infra_restarts, 1);
  EXPECT_EQ(job(id).user_restarts, 0);
  // A first hang is noted on the node but does not count against it (it may be the job's own).
  EXPECT_THAT(ledger_kinds("alpha", "a1"), Contains("hang-seen"));
  EXPECT_THAT(ledger_kinds("alpha", "a1"), Not(Contains("hang")));

  clock.advance_ms(1'000);
  handle(Tick{});
  AttemptRow next = last_attempt(id);
  EXPECT_EQ(next.no, 2);
  EXPECT_EQ(next.resumed_from_step, 20);
  // The hung attempt, once gone, stays hung.
  exits(hung, std::nullopt, 15);
  EXPECT_EQ(attempts(id).at(0).cause, ExitCause::hang);
}

TEST_F(BrainHealth, HangAfterZeroNeverEndsAnAttempt) {
  start({make_cluster("alpha")});
  JobId id = submit(make_job().gpus(4).on({"alpha"}).hang_after_s(0));
  launch_on("alpha", {"a1"});
  clock.advance_ms(30 * kDay);
  handle(Tick{});
  EXPECT_EQ(last_attempt(id).state, AttemptState::running);
}

TEST_F(BrainHealth, AJobThatNeverPrintsTheProtocolIsNeverHung) {
  start({make_cluster("alpha")});
  JobId id = submit(make_job().gpus(4).on({"alpha"}));
  launch_on("alpha", {"a1"});
  clock.advance_ms(3 * kDay);
  handle(Tick{});
  EXPECT_EQ(last_attempt(id).state, AttemptState::running);
}

TEST_F(BrainHealth, AJobThatExpectsProgressGetsTheStartupAllowanceForItsFirstLine) {
  start({make_cluster("alpha")});
  JobSpec spec = make_job().gpus(4).on({"alpha"}).backoff(1, 1).build();
  spec.health.expect_progress = true;
  spec.health.startup_timeout_s = 1800;
  JobId id = submit(spec);
  launch_on("alpha", {"a1"});
  clock.advance_ms(1'799'000);  // loading data, compiling: far past the 60 s step rule
  handle(Tick{});
  EXPECT_EQ(last_attempt(id).state, AttemptState::running);
  clock.advance_ms(2'000);
  handle(Tick{});
  AttemptRow hung = attempts(id).at(0);
  EXPECT_EQ(hung.cause, ExitCause::hang);
  EXPECT_THAT(event_messages(id, "attempt-ended"), Contains(HasSubstr("startup_timeout 1800 s")));
}

TEST_F(BrainHealth, WithoutHangAfterTheLimitIsTwentyMedianStepsAndAtLeastAMinute) {
  start({make_cluster("alpha")});
  // No restart after the hang: the second job below takes the next launch.
  JobId id = submit(make_job().gpus(4).on({"alpha"}).infra_restarts(0));
  launch_on("alpha", {"a1"});
  // Steps of 10 s: silence is allowed for 20 x 10 s = 200 s.
  train(last_attempt(id), 1, 5, 0, 1000, 10.0);
  clock.advance_ms(199'000);
  handle(Tick{});
  EXPECT_EQ(last_attempt(id).state, AttemptState::running);
  clock.advance_ms(2'000);
  handle(Tick{});
  EXPECT_EQ(attempts(id).at(0).cause, ExitCause::hang);
  EXPECT_THAT(event_messages(id, "attempt-ended"),
              Contains(HasSubstr("max(60 s, 20 x median step 10 s)")));

  // Fast steps: the floor of a minute holds.
  JobId fast = submit(make_job().gpus(4).on({"alpha"}));
  launch_on("alpha", {"a2"});
  train(last_attempt(fast), 1, 50, 0, 1000, 0.2);
  clock.advance_ms(59'000);
  handle(Tick{});
  EXPECT_EQ(last_attempt(fast).state, AttemptState::running);
  clock.advance_ms(2'000);
  handle(Tick{});
  EXPECT_EQ(last_attempt(fast).cause, ExitCause::hang);
}

TEST_F(BrainHealth, ANodeLostByAGangIsTheNodeTheSiteNamedNotEveryNodeOfTheAttempt) {
  start({make_cluster("alpha").nodes(4)});
  JobId id = submit(make_job().nodes(3).gpus(4).on({"alpha"}).backoff(1, 1));
  launch_on("alpha", {"a1", "a2", "a3"});
  ExitStatus st;
  st.node_lost = true;
  st.cause = ExitCause::node_lost;
  st.signal = 9;
  st.failed_node = "a2";
  st.detail = "no heartbeat from task 1 on a2 for 31 s";
  AttemptRow a = last_attempt(id);
  handle(AttemptObserved{a.cluster, a.token, RunPhase::exited, st, {}, {}, {}});
  EXPECT_EQ(attempts(id).at(0).failed_node, "a2");
  EXPECT_THAT(ledger_kinds("alpha", "a2"), Contains("node-failure"));
  EXPECT_THAT(ledger_kinds("alpha", "a1"), Not(Contains("node-failure")));
  EXPECT_THAT(event_messages(id, "attempt-ended"), Contains(HasSubstr("on node(s) a2 (")));
}

// ---- MFU --------------------------------------------------------------------------------

TEST_F(BrainHealth, AnMfuDropNamesTheAttemptsNodesAndRecoveryIsReported) {
  start({make_cluster("alpha").peak_tflops(1.0)});
  JobId id = submit(make_job().gpus(4).on({"alpha"}).flops_per_token(1000.0));
  launch_on("alpha", {"a1", "a2"});
  AttemptRow a = last_attempt(id);
  // 1000 tokens x 1000 FLOP per 0.5 s on 4 x 1 TFLOP/s: MFU 5e-4; then 40% slower.
  for (int s = 1; s <= 40; ++s) report(a, {ProgressReport{s, 1000, 0.5, std::nullopt, {}}});
  EXPECT_THAT(events_of_kind(id, "mfu-drop"), IsEmpty());
  for (int s = 41; s <= 70; ++s) report(a, {ProgressReport{s, 1000, 0.8, std::nullopt, {}}});
  auto drops = events_of_kind(id, "mfu-drop");
  ASSERT_EQ(drops.size(), 1u);
  EXPECT_THAT(drops[0].message, HasSubstr("a1, a2"));
  // Back at full speed in one burst of lines: not yet a recovery (no flapping within a second).
  for (int s = 71; s <= 100; ++s) report(a, {ProgressReport{s, 1000, 0.5, std::nullopt, {}}});
  EXPECT_THAT(events_of_kind(id, "mfu-recovered"), IsEmpty());
  // Still there after the hold (10 s): recovered, once.
  for (int s = 101; s <= 130; ++s) {
    clock.advance_ms(500);
    report(a, {ProgressReport{s, 1000, 0.5, std::nullopt, {}}});
  }
  auto recoveries = events_of_kind(id, "mfu-recovered");
  ASSERT_EQ(recoveries.size(), 1u);
  EXPECT_GE(recoveries[0].at_ms - drops[0].at_ms, MfuWatchPolicy{}.hold_ms);
  EXPECT_FALSE(store->mfu_series(a.id, "", 0).value().empty());
}

TEST_F(BrainHealth, TheNodeOfASlowRankIsASuspectOncePerAttempt) {
  start({make_cluster("alpha").peak_tflops(1.0)});
  JobId id = submit(make_job().nodes(2).gpus(4).on({"alpha"}).flops_per_token(1000.0));
  launch_on("alpha", {"a1", "a2"});
  AttemptRow a = last_attempt(id);
  std::vector<RankStepTime> ranks = {
      {0, "a1", 0.50}, {1, "a1", 0.51}, {2, "a2", 0.90}, {3, "a2", 0.52}};
  for (int s = 1; s <= 3; ++s) report(a, {ProgressReport{s, 1000, 0.9, std::nullopt, ranks}});
  EXPECT_EQ(events_of_kind(id, "straggler").size(), 1u);
  EXPECT_THAT(ledger_kinds("alpha", "a2"), ElementsAre("mfu-outlier"));
  EXPECT_THAT(ledger_kinds("alpha", "a1"), IsEmpty());
}

TEST_F(BrainHealth, AConfirmedStragglerStopsTheAttemptWhichRunsAgainWithoutIt) {
  start({make_cluster("alpha").nodes(4)});
  JobId id =
      submit(make_job().nodes(3).gpus(4).on({"alpha"}).flops_per_token(1000.0).backoff(1, 1));
  launch_on("alpha", {"a1", "a2", "a3"});
  AttemptRow a = last_attempt(id);
  // Four reports (or five within 30 s) are a suspicion, not yet a confirmation.
  std::vector<RankStepTime> ranks = {{0, "a1", 0.50}, {1, "a2", 0.90}, {2, "a3", 0.52}};
  for (int s = 1; s <= 4; ++s) report(a, {ProgressReport{s, 1000, 0.9, std::nullopt, ranks}});
  EXPECT_EQ(last_attempt(id).state, AttemptState::running);
  EXPECT_THAT(events_of_kind(id, "straggler-confirmed"), IsEmpty());
  report_slow_a2(a, 5);
  AttemptRow stopped = attempts(id).at(0);
  EXPECT_EQ(stopped.state, AttemptState::exited);
  EXPECT_EQ(stopped.cause, ExitCause::straggler);
  EXPECT_EQ(stopped.failed_node, "a2");
  EXPECT_TRUE(stopped.cancel_requested);
  EXPECT_EQ(actions("alpha", ActionKind::cancel).size(), 1u);
  EXPECT_EQ(events_of_kind(id, "straggler-confirmed").size(), 1u);
  EXPECT_EQ(job(id).infra_restarts, 1);
  // Once it has stopped (SIGTERM, after its checkpoint) the next attempt stays on alpha,
  // without a2; the stopped one stays a straggler's.
  exits(stopped, std::nullopt, 15);
  EXPECT_EQ(attempts(id).at(0).cause, ExitCause::straggler);
  clock.advance_ms(1'000);
  handle(Tick{});
  EXPECT_EQ(last_attempt(id).no, 2);
  EXPECT_EQ(last_attempt(id).cluster, "alpha");
  EXPECT_THAT(pending_launch("alpha").exclude_nodes, ElementsAre("a2"));
}

TEST_F(BrainHealth, TheJobsOwnStoppedAttemptIsNotCountedAsAnotherTenantsGpus) {
  start({make_cluster("alpha").nodes(4)});
  JobId id =
      submit(make_job().nodes(3).gpus(4).on({"alpha"}).flops_per_token(1000.0).backoff(1, 1));
  launch_on("alpha", {"a1", "a2", "a3"});
  // The site lists the attempt's 12 GPUs busy, and lists nothing newer before it restarts.
  inventory("alpha", {{"a1", 4, true, "", 4},
                      {"a2", 4, true, "", 4},
                      {"a3", 4, true, "", 4},
                      {"a4", 4, true, "", 0}});
  AttemptRow a = last_attempt(id);
  std::vector<RankStepTime> ranks = {{0, "a1", 0.50}, {1, "a2", 0.90}, {2, "a3", 0.52}};
  for (int s = 1; s <= 4; ++s) report(a, {ProgressReport{s, 1000, 0.9, std::nullopt, ranks}});
  report_slow_a2(a, 5);
  AttemptRow stopped = attempts(id).at(0);
  ASSERT_EQ(stopped.cause, ExitCause::straggler);
  exits(stopped, std::nullopt, 15);  // its site says it ended: its GPUs are free
  clock.advance_ms(1'000);
  handle(Tick{});
  EXPECT_EQ(last_attempt(id).no, 2) << job(id).reason;
  EXPECT_THAT(job(id).reason, Not(HasSubstr("other tenants")));
  EXPECT_EQ(node("alpha", "a1").gpus_ours_gone, 4);
  // The site's next listing counts only what is busy now.
  inventory("alpha", {{"a1", 4, true, "", 4},
                      {"a2", 4, true, "", 0},
                      {"a3", 4, true, "", 4},
                      {"a4", 4, true, "", 4}});
  EXPECT_EQ(node("alpha", "a1").gpus_ours_gone, 0);
}

TEST_F(BrainHealth, AStragglerIsOnlyNotedWhenTheJobSaysSo) {
  start({make_cluster("alpha").nodes(4)});
  JobId id = submit(
      make_job().nodes(3).gpus(4).on({"alpha"}).flops_per_token(1000.0).exclude_stragglers(false));
  launch_on("alpha", {"a1", "a2", "a3"});
  AttemptRow a = last_attempt(id);
  report_slow_a2(a, 1);
  EXPECT_EQ(events_of_kind(id, "straggler-confirmed").size(), 1u);
  EXPECT_EQ(last_attempt(id).state, AttemptState::running);
  EXPECT_TRUE(actions("alpha", ActionKind::cancel).empty());
}

// ---- classified failures ----------------------------------------------------------------

TEST_F(BrainHealth, AnXidInTheLogIsAGpuErrorOnTheNodeAndSpendsTheInfraBudget) {
  start({make_cluster("alpha")});
  JobId id = submit(make_job().gpus(4).on({"alpha"}).backoff(1, 1));
  launch_on("alpha", {"a1"});
  AttemptObserved seen{"alpha", last_attempt(id).token, RunPhase::exited, ExitStatus{}, {}, {}, {}};
  seen.exit->exit_code = 1;
  seen.log_tail = {"step 40 loss 2.1",
                   "[ 1234.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the "
                   "bus.",
                   "RuntimeError: CUDA error: unspecified launch failure"};
  handle(seen);
  AttemptRow a = attempts(id).at(0);
  EXPECT_EQ(a.cause, ExitCause::gpu_error);
  EXPECT_EQ(job(id).infra_restarts, 1);
  EXPECT_EQ(job(id).user_restarts, 0);
  EXPECT_THAT(ledger_kinds("alpha", "a1"), ElementsAre("gpu-error"));
  auto ended = events_of_kind(id, "attempt-ended");
  ASSERT_FALSE(ended.empty());
  EXPECT_THAT(ended[0].message, HasSubstr("Xid"));
}

TEST_F(BrainHealth, TheSubmitCommandIsInTheLaunchedEvent) {
  start({make_cluster("alpha")});
  JobId id = submit(make_job().gpus(4).on({"alpha"}));
  launch_on("alpha", {"a1"});
  auto launched = events_of_kind(id, "launched");
  ASSERT_EQ(launched.size(), 1u);
  EXPECT_THAT(launched[0].message, HasSubstr("submitted as: sbatch --exclude=x"));
}

}  // namespace
}  // namespace orch::testing
