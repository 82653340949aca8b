// Tiered checkpoints in the brain (issue 38, item 4): a save to the node's own disk and its drain
// to shared storage are two copies of one checkpoint. Resume prefers the node's copy where the
// node survives, never uses a lost node's, and a node's copies are never a source for other
// sites; each node keeps the newest `keep` of them.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class BrainTieredCheckpoints : public BrainFixture {
 protected:
  void SetUp() override {
    start({make_cluster("alpha").node_local("/local/{node}"), make_cluster("beta")});
  }
  static std::string local_path(const AttemptRow& a, const std::string& node, int step) {
    return "/local/" + node + "/job-" + std::to_string(a.job_id) + "/step-" + std::to_string(step);
  }
  static CheckpointReport local_save(const AttemptRow& a, int step,
                                     const std::string& node = "alpha-n0") {
    CheckpointReport r{step, local_path(a, node, step), 0.2};
    r.tier = CheckpointTier::local;
    r.node = node;
    return r;
  }
  static CheckpointReport drained(const AttemptRow& a, int step) {
    return CheckpointReport{step, ckpt_path(a, step), 3.0};
  }
  // Steps 1..last with a node save every 10 and the drains of the steps listed.
  void train_tiered(const AttemptRow& a, int last, const std::set<int>& drains) {
    std::vector<ProgressLine> lines;
    for (int s = 1; s <= last; ++s) {
      lines.push_back(ProgressReport{s, 1000, 0.5, std::nullopt});
      if (s % 10 == 0) lines.push_back(local_save(a, s));
      if (s % 10 == 0 && drains.count(s) != 0) lines.push_back(drained(a, s));
    }
    report(a, std::move(lines));
  }
  std::vector<ReplicaRow> copies_of_step(JobId id, int step) {
    for (const auto& c : store->checkpoints_of(id).value()) {
      if (c.step == step) return store->replicas_of_checkpoint(c.id).value();
    }
    return {};
  }
  nlohmann::json last_launch(const std::string& cluster) {
    nlohmann::json launch;
    for (const auto& a : outbox(cluster)) {
      if (a.kind == ActionKind::launch) launch = a.payload;
    }
    return launch;
  }
};

TEST_F(BrainTieredCheckpoints, TheTwoLinesOfATieredSaveAreTwoCopiesOfOneCheckpoint) {
  JobId id = submit(make_job().prefer({"alpha"}).replicate(3, 1));
  site_launches_all("alpha");
  train_tiered(last_attempt(id), 20, {10, 20});
  ASSERT_EQ(store->checkpoints_of(id).value().size(), 2u);
  auto copies = copies_of_step(id, 20);
  ASSERT_EQ(copies.size(), 2u);
  for (const auto& r : copies) {
    EXPECT_EQ(r.cluster, "alpha");
    EXPECT_EQ(r.state, ReplicaState::verified) << r.path;
  }
  EXPECT_TRUE(copies[0].node == "alpha-n0" || copies[1].node == "alpha-n0");
  EXPECT_TRUE(copies[0].node.empty() || copies[1].node.empty());
  // The blocking cost is the node save's, not the drain's.
  EXPECT_DOUBLE_EQ(store->checkpoints_of(id).value().back().save_time_s.value_or(0), 0.2);
}

TEST_F(BrainTieredCheckpoints, OnlyTheSharedCopyIsReplicatedOffSite) {
  JobId id = submit(make_job().prefer({"alpha"}).replicate(3, 2, "beta"));
  site_launches_all("alpha");
  train_tiered(last_attempt(id), 20, {10});  // step 20 is on the node only
  // Step 10's shared copy went to beta; step 20 has no site copy anywhere to copy from.
  bool ten_at_beta = false;
  for (const auto& r : copies_of_step(id, 10)) ten_at_beta |= r.cluster == "beta";
  EXPECT_TRUE(ten_at_beta);
  for (const auto& r : copies_of_step(id, 20)) EXPECT_EQ(r.cluster, "alpha") << r.path;
  for (const auto& t : store->transfers(false, 100).value()) {
    EXPECT_THAT(t.src_path, ::testing::Not(HasSubstr("/local/"))) << "a node's copy was a source";
  }
}

TEST_F(BrainTieredCheckpoints, ASurvivingNodesOwnCopyIsTheFirstCandidateOnThatNode) {
  JobId id = submit(make_job().prefer({"alpha"}).backoff(0).replicate(3, 1));
  site_launches_all("alpha");
  AttemptRow first = last_attempt(id);
  train_tiered(first, 35, {10, 20});  // 30 saved on the node, not drained yet
  exits(first, std::nullopt, 9);      // the process killed; the node is fine

  AttemptRow second = last_attempt(id);
  ASSERT_EQ(second.no, 2);
  EXPECT_EQ(second.cluster, "alpha");
  EXPECT_EQ(second.resumed_from_step, 30);
  auto candidates = last_launch("alpha")["resume_candidates"];
  ASSERT_GE(candidates.size(), 2u);
  EXPECT_EQ(candidates[0]["node"], "alpha-n0");
  EXPECT_EQ(candidates[0]["path"], local_path(first, "alpha-n0", 30));
  EXPECT_EQ(candidates[1]["step"], 20) << "30 has no shared copy";
}

TEST_F(BrainTieredCheckpoints, ALostNodesCopiesAreMarkedMissingAndNeverCandidates) {
  JobId id = submit(make_job().prefer({"alpha"}).backoff(0).replicate(3, 1));
  site_launches_all("alpha");
  AttemptRow first = last_attempt(id);
  train_tiered(first, 35, {10, 20});
  ExitStatus lost;
  lost.node_lost = true;
  lost.failed_node = "alpha-n0";
  handle(AttemptObserved{"alpha", first.token, RunPhase::exited, lost, {}, {}, {}});

  for (const auto& r : copies_of_step(id, 30)) {
    EXPECT_EQ(r.state, ReplicaState::missing) << r.path;
    EXPECT_THAT(r.detail, HasSubstr("lost with node alpha-n0"));
  }
  AttemptRow second = last_attempt(id);
  ASSERT_EQ(second.no, 2);
  EXPECT_EQ(second.resumed_from_step, 20) << "the newest drained copy; 30 died with its node";
  for (const auto& c : last_launch(second.cluster)["resume_candidates"]) {
    EXPECT_FALSE(c.contains("node")) << c.dump();
  }
}

TEST_F(BrainTieredCheckpoints, ANodeLineIsRefusedWhereItCannotBeTheAttemptsOwn) {
  JobId id = submit(make_job().prefer({"alpha"}));
  site_launches_all("alpha");
  AttemptRow a = last_attempt(id);
  report(a, {local_save(a, 10, "alpha-n7")});  // not a node of the attempt
  CheckpointReport elsewhere = local_save(a, 20);
  elsewhere.path = "/local/alpha-n1/job-1/step-20";  // another node's directory
  report(a, {elsewhere});
  EXPECT_TRUE(store->checkpoints_of(id).value().empty());
  auto bad = events_of_kind(id, "bad-progress-line");
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_THAT(bad[0].message, HasSubstr("\"alpha-n7\" is not one of the attempt's nodes"));
  EXPECT_THAT(bad[1].message, HasSubstr("$ORCH_LOCAL_CHECKPOINT_DIR"));

  JobId on_beta = submit(make_job().prefer({"beta"}));
  site_launches_all("beta");
  AttemptRow b = last_attempt(on_beta);
  report(b, {local_save(b, 10, "beta-n0")});
  auto refused = events_of_kind(on_beta, "bad-progress-line");
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_THAT(refused[0].message, HasSubstr("keeps no copies on a node's own disk"));
}

TEST_F(BrainTieredCheckpoints, EachNodeKeepsTheNewestKeepOfItsCopies) {
  JobId id = submit(make_job().prefer({"alpha"}).replicate(2, 1));
  site_launches_all("alpha");
  train_tiered(last_attempt(id), 50, {});  // never drained: the node tier alone
  handle(Tick{});
  settle_data();
  std::vector<int> kept;
  for (const auto& c : store->checkpoints_of(id).value()) {
    for (const auto& r : store->replicas_of_checkpoint(c.id).value()) {
      if (r.state != ReplicaState::deleted) kept.push_back(static_cast<int>(c.step));
    }
  }
  EXPECT_THAT(kept, ::testing::ElementsAre(40, 50));
}

// Retention of drained checkpoints deletes each of their copies once, the node's among them
// (the node tier's retention and the plan's each take theirs; neither deletes what the other
// has).
TEST_F(BrainTieredCheckpoints, ARetiredCheckpointsNodeCopyIsDeletedOnce) {
  JobId id = submit(make_job().prefer({"alpha"}).replicate(2, 1));
  site_launches_all("alpha");
  train_tiered(last_attempt(id), 50, {10, 20, 30, 40, 50});
  handle(Tick{});
  settle_data();
  int deleting_step_10 = 0;
  for (const auto& e : events_of_kind(id, "checkpoint-deleted")) {
    if (e.message.find("step 10 at alpha") != std::string::npos) ++deleting_step_10;
  }
  EXPECT_EQ(deleting_step_10, 2) << "its shared copy and its node copy, each once";
  for (const auto& r : copies_of_step(id, 10)) EXPECT_EQ(r.state, ReplicaState::deleted);
  for (const auto& r : copies_of_step(id, 50)) EXPECT_EQ(r.state, ReplicaState::verified);
}

}  // namespace
}  // namespace orch::testing
