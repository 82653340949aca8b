// The staging part on its own, over copies the registry recorded and the verifier verified: a
// verified copy is one to resume from, newest first, only where it lies; moving a checkpoint costs
// its bytes over the bandwidth where no copy is kept or coming; a job whose dataset is elsewhere
// waits for a copy, which is started.
#include <gmock/gmock.h>

#include "scheduler/brain/data_stager.h"
#include "scheduler/brain/data_verifier.h"
#include "tests/harness/brain_part_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class DataStagerTest : public BrainPartFixture {
 protected:
  void SetUp() override {
    // "kube" stands for a provider whose storage cannot be listed (no real one since issue 20).
    start({make_cluster("alpha").storage("/data/alpha"), make_cluster("beta").storage("/data/b"),
           make_cluster("kube").provider("unlisted")});
    registry = std::make_unique<DataRegistry>(*core);
    transfers = std::make_unique<DataTransfers>(*core, *registry);
    verifier = std::make_unique<DataVerifier>(*core, *registry, *transfers);
    staging = std::make_unique<DataStager>(*core, *registry, *transfers);
  }

  // A checkpoint at `step` reported by the attempt, recorded by the registry.
  std::int64_t report_checkpoint(const AttemptRow& a, std::int64_t step, const std::string& path) {
    auto id = store->insert_checkpoint({0, a.job_id, a.id, step, path, 0.5, clock.now_ms()});
    std::int64_t checkpoint = id.value().value();
    in_transaction([&] { return registry->register_checkpoint(a, checkpoint, path); });
    return checkpoint;
  }

  static Manifest one_file(std::uint64_t size) {
    Manifest m;
    m.files.push_back({"", size, std::string(64, 'a')});  // one file: the path itself
    return m;
  }

  std::unique_ptr<DataRegistry> registry;
  std::unique_ptr<DataTransfers> transfers;
  std::unique_ptr<DataVerifier> verifier;
  std::unique_ptr<DataStager> staging;
};

TEST_F(DataStagerTest, AListedCheckpointIsVerifiedAndOfferedToResumeFromNewestFirst) {
  JobRow job = add_job(make_job(), JobState::running);
  AttemptRow a = add_attempt(job, "alpha", 1, {"alpha-n0"});
  report_checkpoint(a, 100, "/data/alpha/ckpt-100");
  report_checkpoint(a, 200, "/data/alpha/ckpt-200");
  for (const auto& row : outbox("alpha", ActionKind::manifest)) {
    in_transaction([&] {
      return verifier->on(ManifestCompleted{row.id, "alpha", row.payload, one_file(10)});
    });
  }
  auto here = transaction_value([&] { return staging->resume_candidates_at(job.id, "alpha"); });
  ASSERT_EQ(here.size(), 2u);
  EXPECT_EQ(here[0].step, 200);
  EXPECT_EQ(here[1].step, 100);
  auto elsewhere = transaction_value([&] { return staging->resume_candidates_at(job.id, "beta"); });
  EXPECT_TRUE(elsewhere.empty());
}

TEST_F(DataStagerTest, MovingACheckpointCostsItsBytesOverTheBandwidthWhereNoCopyIsKept) {
  JobRow job = add_job(make_job(), JobState::running);
  EXPECT_TRUE(staging->checkpoint_copy_estimates(job.id).value().empty()) << "no checkpoint yet";
  AttemptRow a = add_attempt(job, "alpha", 1, {"alpha-n0"});
  std::int64_t ckpt = report_checkpoint(a, 100, "/data/alpha/ckpt-100");
  EXPECT_TRUE(staging->checkpoint_copy_estimates(job.id).value().empty()) << "size not known yet";
  auto listing = outbox("alpha", ActionKind::manifest).at(0);
  in_transaction([&] {
    return verifier->on(
        ManifestCompleted{listing.id, "alpha", listing.payload, one_file(300'000'000)});
  });
  // Nothing where it was saved; nothing at beta either, where replication is copying it off-site
  // (a move there would wait for that copy, not make another); 300 MB at the prior 100 MB/s to
  // kube, which keeps no copy.
  ASSERT_EQ(store->replicas_of_checkpoint(ckpt).value().size(), 2u);
  auto costs = staging->checkpoint_copy_estimates(job.id).value();
  EXPECT_EQ(costs["alpha"], 0);
  EXPECT_EQ(costs["beta"], 0);
  EXPECT_DOUBLE_EQ(costs["kube"], 3.0);
}

TEST_F(DataStagerTest, AJobWhoseDatasetIsElsewhereWaitsForItsCopy) {
  in_transaction([&] {
    return registry->on(RegisterDataset{"tiny", "alpha", "/data/alpha/tiny"});
  });
  auto listing = outbox("alpha", ActionKind::manifest).at(0);
  in_transaction([&] {
    return verifier->on(ManifestCompleted{listing.id, "alpha", listing.payload, one_file(5)});
  });
  JobRow job = add_job(make_job().datasets({"tiny"}));

  std::map<std::string, std::string> env, beta_env;
  auto at_alpha = transaction_value([&] { return staging->stage_for(job, "alpha", env); });
  auto at_beta = transaction_value([&] { return staging->stage_for(job, "beta", beta_env); });
  EXPECT_TRUE(at_alpha.empty());
  EXPECT_EQ(env.begin()->second, "/data/alpha/tiny");
  ASSERT_EQ(at_beta.size(), 1u);
  EXPECT_THAT(at_beta[0], HasSubstr("tiny"));
  EXPECT_EQ(store->transfers(true, 10).value().size(), 1u);
}

}  // namespace
}  // namespace orch::testing
