// Lemons judged by rate in the brain (issue 43): each node's failures under work and the
// GPU-hours it ran are kept as attempts end, a lemon is retired rather than released by a
// passing probe, and in a uniformly flaky cluster the count rule stands aside. Five nodes of
// 4 GPUs; the fake clock moves by hours. A job's next attempt avoids the node its last one
// failed on, so a node kills two jobs, not one job twice.
#include <gmock/gmock.h>

#include "scheduler/model/launch_request_json.h"
#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

constexpr Millis kHour = 3600LL * 1000;

class BrainNodeRate : public BrainFixture {
 protected:
  void start_alpha(double cooldown_h) {
    start({make_cluster("alpha").nodes(5).quarantine(2, 168, cooldown_h)});
    std::vector<NodeInfo> nodes;
    for (const char* n : {"a1", "a2", "a3", "a4", "a5"}) nodes.push_back({n, 4, true, ""});
    handle(InventoryObserved{"alpha", SiteInventory{nodes}});
  }
  NodeRow node(const std::string& name) { return store->node("alpha", name).value().value(); }
  // The job's pending attempt is launched on `nodes` and runs.
  AttemptRow run_on(JobId id, std::vector<std::string> nodes) {
    const AttemptRow a = last_attempt(id);
    for (const auto& o : outbox("alpha")) {
      if (o.kind != ActionKind::launch || o.token != a.token) continue;
      handle(LaunchCompleted{o.id, o.token, LaunchResult{"site-" + o.token, nodes}, false});
      handle(AttemptObserved{"alpha", o.token, RunPhase::running, std::nullopt, nodes, {}, {}});
    }
    return last_attempt(id);
  }
  // `failed` dies under the attempt: the site ends it node_lost, naming the node.
  void node_fails_under(const AttemptRow& a, const std::string& failed) {
    ExitStatus lost;
    lost.node_lost = true;
    lost.cause = ExitCause::node_lost;
    lost.signal = 9;
    lost.failed_node = failed;
    lost.detail = "NODE_FAIL";
    handle(AttemptObserved{"alpha", a.token, RunPhase::exited, lost, {}, {}, {}});
  }
  JobId submit_one_node() { return submit(make_job().gpus(4).backoff(0).infra_restarts(20)); }
};

TEST_F(BrainNodeRate, EachNodeKeepsItsFailuresUnderWorkAndTheGpuHoursItRan) {
  start_alpha(1);
  JobId gang = submit(make_job().nodes(3).gpus(4).backoff(0).infra_restarts(20));
  AttemptRow a = run_on(gang, {"a2", "a3", "a4"});
  clock.advance_ms(10 * kHour);
  node_fails_under(a, "a3");  // one incident: the site marks it down too
  handle(InventoryObserved{"alpha", SiteInventory{{{"a1", 4, true, ""},
                                                   {"a2", 4, true, ""},
                                                   {"a3", 4, false, "down"},
                                                   {"a4", 4, true, ""},
                                                   {"a5", 4, true, ""}}}});
  EXPECT_EQ(node("a3").work_failures, 1);
  EXPECT_EQ(node("a2").work_failures, 0);
  EXPECT_NEAR(node("a2").work_gpu_hours, 40.0, 1e-6);  // 10 h x 4 GPUs
  EXPECT_NEAR(node("a3").work_gpu_hours, 40.0, 1e-6);
  EXPECT_NEAR(node("a1").work_gpu_hours, 0.0, 1e-6);
}

TEST_F(BrainNodeRate, ALemonIsRetiredInsteadOfReleasedWhenItsReleaseProbePasses) {
  start_alpha(200);  // a long cooldown: its peers run meanwhile
  JobId gang = submit(make_job().nodes(3).gpus(4).backoff(0));
  AttemptRow g = run_on(gang, {"a2", "a3", "a4"});
  // a1 kills two jobs an hour each: the count rule quarantines it (its peers have run too
  // little yet to be compared with).
  for (int i = 0; i < 2; ++i) {
    AttemptRow a = run_on(submit_one_node(), {"a1"});
    clock.advance_ms(kHour);
    node_fails_under(a, "a1");
  }
  ASSERT_EQ(node("a1").state, NodeState::quarantined);
  EXPECT_THAT(node("a1").state_reason, HasSubstr("2 failures within 7 days"));

  // Its peers run 200 h without a failure (2,400 GPU-hours), then the release probe passes.
  clock.advance_ms(200 * kHour);
  exits(g, 0);
  handle(Tick{});
  OutboxRow probe;
  for (const auto& o : outbox("alpha")) {
    if (o.kind == ActionKind::probe) probe = o;
  }
  ASSERT_EQ(probe_request_from_json(probe.payload).value().nodes, std::vector<std::string>{"a1"});
  ProbeResult passed;
  passed.node = "a1";
  passed.ok = true;
  passed.gemm_gflops = 10;
  passed.write_mb_s = passed.read_mb_s = 500;
  passed.raw = R"({"probe":1,"node":"a1"})";
  handle(ProbeCompleted{probe.id, "alpha", probe.token, std::vector<ProbeResult>{passed}});
  NodeRow a1 = node("a1");
  EXPECT_EQ(a1.state, NodeState::retired);
  EXPECT_THAT(a1.state_reason, HasSubstr("release probe passed, but 2 failures in 8 GPU-hours"));
  EXPECT_THAT(a1.state_reason, HasSubstr("retired as a lemon"));
}

TEST_F(BrainNodeRate, InAUniformlyFlakyClusterTwoFailuresInAWeekDoNotQuarantine) {
  start_alpha(1);
  // A 3-node gang on a2-a4 loses a node every 20 h, for 200 h: 10 failures in 2,400 GPU-hours,
  // (10 + 0.025) / (2,400 + 200) = 0.0039/GPU-h, a busy node's 2 failures in 168 h are a 73%
  // chance. Each failed node is back at once.
  JobId gang = submit(make_job().nodes(3).gpus(4).backoff(0).infra_restarts(20));
  const std::vector<std::string> peers = {"a2", "a3", "a4"};
  for (int i = 0; i < 10; ++i) {
    AttemptRow a = run_on(gang, peers);
    clock.advance_ms(20 * kHour);
    node_fails_under(a, peers[static_cast<std::size_t>(i) % 3]);
  }
  for (const auto& p : peers) EXPECT_EQ(node(p).state, NodeState::active) << p;
  // a1 fails twice under a job, after 20 h each (160 GPU-hours): 3.2x its peers' rate, but at
  // their rate a 13% chance.
  for (int i = 0; i < 2; ++i) {
    AttemptRow a = run_on(submit_one_node(), {"a1"});
    clock.advance_ms(20 * kHour);
    node_fails_under(a, "a1");
  }
  NodeRow a1 = node("a1");
  EXPECT_EQ(a1.work_failures, 2);
  EXPECT_EQ(a1.state, NodeState::active);
}

}  // namespace
}  // namespace orch::testing
