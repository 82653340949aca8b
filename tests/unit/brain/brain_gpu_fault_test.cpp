// Issue 43: an attempt the site ended for a GPU fault the agent's live watch saw (gpu_xid,
// gpu_ecc) blames the node it names, takes it out of service at once, and the job resumes
// without it, spending no user budget. The site's part is played with events, on a fake clock.
#include <gmock/gmock.h>

#include "scheduler/model/task_fault.h"
#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

class BrainGpuFault : public BrainFixture {
 protected:
  void healthy_nodes(const std::string& cluster, const std::vector<std::string>& names) {
    std::vector<NodeInfo> nodes;
    for (const auto& n : names) nodes.push_back({n, 4, true, ""});
    handle(InventoryObserved{cluster, SiteInventory{std::move(nodes)}});
  }
  void launch_on(const std::string& cluster, const std::vector<std::string>& nodes) {
    for (const auto& a : outbox(cluster)) {
      if (a.kind != ActionKind::launch) continue;
      handle(LaunchCompleted{a.id, a.token, LaunchResult{"site-" + a.token, nodes, "sbatch"},
                             false});
      handle(AttemptObserved{cluster, a.token, RunPhase::running, std::nullopt, nodes, {}, {}});
    }
  }
  // What the Slurm and local sites report for a task's fault record (fault_exit_status).
  void site_ends_with(JobId id, ExitCause cause, const std::string& node, const std::string& what) {
    TaskFault fault;
    fault.cause = cause;
    fault.node = node;
    fault.task_rank = 1;
    fault.gpu = 3;
    fault.detail = what;
    fault.at_ms = clock.now_ms();
    AttemptRow a = last_attempt(id);
    handle(AttemptObserved{a.cluster, a.token, RunPhase::exited,
                           fault_exit_status(fault, node, 1), {}, {}, {}});
  }
  std::vector<std::string> event_messages(JobId id, const std::string& kind) {
    std::vector<std::string> out;
    for (const auto& e : store->events_of(id).value()) {
      if (e.kind == kind) out.push_back(e.message);
    }
    return out;
  }
  std::vector<std::string> ledger_kinds(const std::string& cluster, const std::string& name) {
    std::vector<std::string> kinds;
    for (const auto& e : store->node_events(cluster, name, 100).value()) kinds.push_back(e.kind);
    return kinds;
  }
};

TEST_F(BrainGpuFault, AFatalXidQuarantinesItsNodeAtOnceAndTheJobResumesWithoutIt) {
  start({make_cluster("alpha").nodes(4)});
  healthy_nodes("alpha", {"a1", "a2", "a3", "a4"});
  JobId id = submit(make_job().nodes(3).gpus(4).on({"alpha"}).backoff(0));
  launch_on("alpha", {"a1", "a2", "a3"});
  site_ends_with(id, ExitCause::gpu_xid, "a2",
                 "Xid 79 on GPU 3 (PCI 0000:3b:00): GPU has fallen off the bus");

  const AttemptRow first = attempts(id).at(0);
  EXPECT_EQ(first.cause, ExitCause::gpu_xid);
  EXPECT_EQ(first.failed_node, "a2");
  EXPECT_THAT(ledger_kinds("alpha", "a2"), Contains("gpu-fault"));
  EXPECT_THAT(ledger_kinds("alpha", "a1"), Not(Contains("gpu-fault")));
  // One fault is enough: the GPU needs a reset or service, whatever the count rule says.
  const NodeRow a2 = store->node("alpha", "a2").value().value();
  EXPECT_EQ(a2.state, NodeState::quarantined);
  EXPECT_THAT(a2.state_reason, HasSubstr("Xid 79 on GPU 3"));
  // The next attempt leaves the node out, and no user budget was spent.
  ASSERT_EQ(attempts(id).size(), 2u);
  auto launch = outbox("alpha").at(0);
  EXPECT_THAT(launch.payload["exclude_nodes"].get<std::vector<std::string>>(), Contains("a2"));
  EXPECT_EQ(job(id).user_restarts, 0);
  EXPECT_EQ(job(id).infra_restarts, 1);
}

TEST_F(BrainGpuFault, AnUncorrectableEccRiseIsAnInfraFailureThatBlamesOnlyTheNamedNode) {
  start({make_cluster("alpha").nodes(3)});
  healthy_nodes("alpha", {"a1", "a2", "a3"});
  JobId id = submit(make_job().nodes(2).gpus(4).on({"alpha"}).backoff(0));
  launch_on("alpha", {"a1", "a2"});
  site_ends_with(id, ExitCause::gpu_ecc, "a1", "uncorrectable ECC errors on GPU 3 rose from 0 to 2");
  EXPECT_EQ(attempts(id).at(0).cause, ExitCause::gpu_ecc);
  EXPECT_TRUE(is_infra_cause(ExitCause::gpu_ecc));
  EXPECT_EQ(store->node("alpha", "a1").value()->state, NodeState::quarantined);
  EXPECT_EQ(store->node("alpha", "a2").value()->state, NodeState::active);
  EXPECT_THAT(event_messages(id, "attempt-ended"), Contains(HasSubstr("gpu_ecc")));
}

}  // namespace
}  // namespace orch::testing
