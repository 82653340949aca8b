// Burn-in's fabric step in the brain (issue 43): after the probe round the nodes that passed run
// all-reduce pair by pair; a node whose every pairing is slow is quarantined with its figures, a
// pair slow alone is named on both nodes' ledgers and the cluster's events, then the cluster is
// admitted. The site's part is played with events.
#include <gmock/gmock.h>

#include "scheduler/model/fabric_step.h"
#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

ProbeResult passing(const std::string& node) {
  ProbeResult r;
  r.node = node;
  r.ok = true;
  r.gemm_gflops = 10;
  r.write_mb_s = 500;
  r.read_mb_s = 500;
  return r;
}

class BrainFabric : public BrainFixture {
 protected:
  void SetUp() override {
    ClusterSpec spec = make_cluster("alpha").nodes(5).burn_in_on_join();
    spec.burn_in.fabric.all_reduce_perf = "/opt/nccl-tests/all_reduce_perf";
    spec.burn_in.fabric.rounds = 4;
    start({spec});
    std::vector<NodeInfo> nodes;
    for (const auto& n : {"a1", "a2", "a3", "a4", "a5"}) nodes.push_back({n, 4, true, ""});
    handle(InventoryObserved{"alpha", SiteInventory{nodes}});
    handle(Tick{});
  }
  // The probe round: every node passes but a5 (its checks failed).
  OutboxRow pass_probes() {
    auto probes = actions("alpha", ActionKind::probe);
    EXPECT_EQ(probes.size(), 1u);
    ProbeResult bad = passing("a5");
    bad.ok = false;
    handle(ProbeCompleted{
        probes[0].id, "alpha", probes[0].token,
        std::vector<ProbeResult>{passing("a1"), passing("a2"), passing("a3"), passing("a4"), bad}});
    for (const auto& a : actions("alpha", ActionKind::probe)) {
      if (is_fabric_step(a.payload)) return a;
    }
    ADD_FAILURE() << "no fabric step was enqueued";
    return {};
  }
  // Every pair of the step measured: 40 GB/s unless `figure` says otherwise.
  std::vector<FabricPairResult> measure(const OutboxRow& action,
                                        const std::map<NodePair, double>& figure) {
    std::vector<FabricPairResult> out;
    for (const auto& round : fabric_step_from_json(action.payload).value().rounds) {
      for (const auto& p : round) {
        out.push_back({p.first, p.second, figure.count(p) ? figure.at(p) : 40.0, ""});
      }
    }
    return out;
  }
  std::vector<OutboxRow> actions(const std::string& cluster, ActionKind kind) {
    std::vector<OutboxRow> out;
    for (const auto& a : outbox(cluster)) {
      if (a.kind == kind) out.push_back(a);
    }
    return out;
  }
  NodeRow node(const std::string& name) { return store->node("alpha", name).value().value(); }
  std::vector<std::string> ledger(const std::string& name) {
    std::vector<std::string> out;
    for (const auto& e : store->node_events("alpha", name, 100).value()) {
      out.push_back(e.kind + ": " + e.message);
    }
    return out;
  }
};

TEST_F(BrainFabric, TheNodesThatPassedTheirProbesRunTheFabricStepBeforeTheClusterIsAdmitted) {
  OutboxRow step = pass_probes();
  EXPECT_EQ(store->cluster("alpha").value()->admission, Admission::burn_in);
  auto parsed = fabric_step_from_json(step.payload);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->all_reduce_perf, "/opt/nccl-tests/all_reduce_perf");
  // Four nodes meet every partner in three rounds; a5 failed its probes and is left out.
  ASSERT_EQ(parsed->rounds.size(), 3u);
  for (const auto& round : parsed->rounds) {
    ASSERT_EQ(round.size(), 2u);
    for (const auto& p : round) {
      EXPECT_NE(p.first, "a5");
      EXPECT_NE(p.second, "a5");
    }
  }
  handle(FabricCompleted{step.id, "alpha", step.token, measure(step, {})});
  EXPECT_EQ(store->cluster("alpha").value()->admission, Admission::active);
  for (const auto& n : {"a1", "a2", "a3", "a4"}) EXPECT_EQ(node(n).state, NodeState::active);
}

TEST_F(BrainFabric, ANodeWhoseEveryPairingIsSlowIsQuarantinedWithItsFigures) {
  OutboxRow step = pass_probes();
  std::map<NodePair, double> slow;
  for (const auto& round : fabric_step_from_json(step.payload).value().rounds) {
    for (const auto& p : round) {
      if (p.first == "a3" || p.second == "a3") slow[p] = 12.0;
    }
  }
  handle(FabricCompleted{step.id, "alpha", step.token, measure(step, slow)});
  EXPECT_EQ(node("a3").state, NodeState::quarantined);
  // Half the six pairs are a3's: the median pair is (12 + 40) / 2.
  EXPECT_THAT(node("a3").state_reason,
              HasSubstr("every pairing slow, best 12.0 GB/s, 46% of the median pair (26.0 GB/s) "
                        "over 3 pairing(s)"));
  EXPECT_EQ(node("a1").state, NodeState::active);
  EXPECT_EQ(store->cluster("alpha").value()->admission, Admission::active);
}

TEST_F(BrainFabric, APairSlowAloneIsNamedOnBothLedgersAndQuarantinesNeither) {
  OutboxRow step = pass_probes();
  const NodePair planted = fabric_step_from_json(step.payload).value().rounds[1][0];
  handle(FabricCompleted{step.id, "alpha", step.token, measure(step, {{planted, 12.1}})});
  const std::string named =
      planted.first + " <-> " + planted.second + ": 12.1 GB/s, 30% of the median pair (40.0 GB/s)";
  for (const auto& n : {planted.first, planted.second}) {
    EXPECT_EQ(node(n).state, NodeState::active);
    EXPECT_THAT(ledger(n), ::testing::Contains(HasSubstr("fabric-slow-pair: burn-in fabric: slow "
                                                         "pair " +
                                                         named)));
  }
  bool in_probes = false;
  for (const auto& p : store->probes("alpha", planted.first, 10).value()) {
    in_probes = in_probes || p.reason.find(named) != std::string::npos;
  }
  EXPECT_TRUE(in_probes);
}

TEST_F(BrainFabric, AFabricStepThatCannotRunAdmitsTheClusterAndSaysWhy) {
  OutboxRow step = pass_probes();
  handle(FabricCompleted{step.id, "alpha", step.token,
                         make_error(ErrorKind::unsupported, "this provider cannot run it")});
  EXPECT_EQ(store->cluster("alpha").value()->admission, Admission::active);
  for (const auto& n : {"a1", "a2", "a3", "a4"}) EXPECT_EQ(node(n).state, NodeState::active);
}

TEST_F(BrainFabric, WithoutAllReducePerfThereIsNoFabricStep) {
  start({make_cluster("alpha").nodes(2).burn_in_on_join()});
  handle(InventoryObserved{"alpha", SiteInventory{{{"a1", 4, true, ""}, {"a2", 4, true, ""}}}});
  handle(Tick{});
  auto probes = actions("alpha", ActionKind::probe);
  ASSERT_EQ(probes.size(), 1u);
  handle(ProbeCompleted{probes[0].id, "alpha", probes[0].token,
                        std::vector<ProbeResult>{passing("a1"), passing("a2")}});
  EXPECT_EQ(store->cluster("alpha").value()->admission, Admission::active);
  EXPECT_THAT(actions("alpha", ActionKind::probe), IsEmpty());
}

}  // namespace
}  // namespace orch::testing
