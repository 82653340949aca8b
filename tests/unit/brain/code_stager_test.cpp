// A job's code staged to a site (issue 40; code_stager.cpp): the job waits in staging while a
// transfer from the server's code store copies its archive there; once that transfer is done,
// no other job with the same code sends it there again, and a second site gets it once too.
// Code no live or recent job uses is removed at its site (code_pruning.cpp).
#include <gmock/gmock.h>

#include <set>

#include "scheduler/brain/data_stager.h"
#include "scheduler/model/workdir.h"
#include "tests/harness/brain_part_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

const std::string kHash(64, 'f');

class CodeStagerTest : public BrainPartFixture {
 protected:
  void SetUp() override {
    start({make_cluster("alpha").provider("local").storage("/data/alpha"),
           make_cluster("beta").provider("slurm").storage("/shared/beta"),
           make_cluster("kube").provider("kubernetes").storage("/mnt/orch"),
           make_cluster("pvc")
               .provider("kubernetes")
               .storage("/mnt/shared/orch")
               .kube_volume("shared", "orch-data", "/mnt/shared")});
    registry = std::make_unique<DataRegistry>(*core);
    transfers = std::make_unique<DataTransfers>(*core, *registry);
    staging = std::make_unique<DataStager>(*core, *registry, *transfers);
  }

  JobRow code_job(const std::string& hash = kHash) {
    JobSpec spec = make_job();
    spec.workdir.sha256 = hash;
    spec.workdir.bytes = 200LL << 20;
    return add_job(spec);
  }

  std::vector<std::string> stage(const JobRow& job, const std::string& cluster) {
    std::map<std::string, std::string> env;
    return transaction_value([&] { return staging->stage_for(job, cluster, env); });
  }

  // The copies of code the server has recorded, newest first (any state).
  std::vector<TransferRow> code_copies() {
    return store->transfers_from(std::string(kCodeStoreSite), 100).value();
  }

  void finish(std::int64_t transfer, Result<TransferOutcome> result) {
    in_transaction([&] { return transfers->on(TransferFinished{transfer, std::move(result)}); });
  }

  std::unique_ptr<DataRegistry> registry;
  std::unique_ptr<DataTransfers> transfers;
  std::unique_ptr<DataStager> staging;
};

TEST_F(CodeStagerTest, AJobWaitsWhileItsCodeIsCopiedFromTheServerOnce) {
  JobRow job = code_job();
  auto waits = stage(job, "alpha");
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_THAT(waits[0], HasSubstr("its code (workdir ffffffffffff) is being copied to alpha"));
  ASSERT_EQ(code_copies().size(), 1u);
  const TransferRow t = code_copies()[0];
  EXPECT_EQ(t.src_path, "/code/" + kHash + ".tar");
  EXPECT_EQ(t.dst_cluster, "alpha");
  EXPECT_EQ(t.dst_path, code_archive_path("/data/alpha", kHash));
  EXPECT_EQ(t.bytes_total, 200LL << 20);
  // Placed again while it copies: the same transfer, no second one.
  EXPECT_EQ(stage(job, "alpha").size(), 1u);
  EXPECT_EQ(code_copies().size(), 1u);

  finish(t.id, TransferOutcome{200u << 20, 2.0, "local", 0});
  EXPECT_EQ(store->transfer(t.id).value()->state, TransferState::done);
  EXPECT_TRUE(stage(job, "alpha").empty());
}

TEST_F(CodeStagerTest, TheSameCodeIsSentToEachSiteOncePerHash) {
  JobRow first = code_job();
  stage(first, "alpha");
  finish(code_copies()[0].id, TransferOutcome{1, 1.0, "local", 0});
  // A second job with the same code at the same site: nothing sent.
  JobRow second = code_job();
  EXPECT_TRUE(stage(second, "alpha").empty());
  EXPECT_EQ(code_copies().size(), 1u);
  // At a second site: sent once, however often it is placed there.
  EXPECT_EQ(stage(second, "beta").size(), 1u);
  EXPECT_EQ(stage(first, "beta").size(), 1u);
  ASSERT_EQ(code_copies().size(), 2u);
  finish(code_copies()[0].id, TransferOutcome{1, 1.0, "push to beta login node", 0});
  EXPECT_TRUE(stage(first, "beta").empty());
  EXPECT_TRUE(stage(second, "beta").empty());
  EXPECT_EQ(code_copies().size(), 2u);
  // Changed code is a new archive: sent once more.
  JobRow changed = code_job(std::string(64, 'e'));
  EXPECT_EQ(stage(changed, "alpha").size(), 1u);
  EXPECT_EQ(code_copies().size(), 3u);
}

TEST_F(CodeStagerTest, ACopyThatFailedForGoodIsStartedAgainSayingWhy) {
  JobRow job = code_job();
  stage(job, "alpha");
  finish(code_copies()[0].id,
         make_error(ErrorKind::invalid, "the server's code store holds no such archive"));
  EXPECT_EQ(code_copies()[0].state, TransferState::failed);
  auto waits = stage(job, "alpha");
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_THAT(waits[0], HasSubstr("the last copy failed: the server's code store holds no"));
  EXPECT_EQ(code_copies().size(), 2u);
}

TEST_F(CodeStagerTest, AClusterWithoutACodeRouteSaysSoAndSendsNothing) {
  JobRow job = code_job();
  auto waits = stage(job, "kube");
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_THAT(waits[0], HasSubstr("cannot be staged to Kubernetes cluster kube: its storage.root "
                                  "/mnt/orch is on none of its writable kubernetes.volumes"));
  EXPECT_TRUE(code_copies().empty());
}

TEST_F(CodeStagerTest, AKubernetesClusterWithItsStorageRootOnAVolumeGetsTheCodeOnce) {
  JobRow job = code_job();
  auto waits = stage(job, "pvc");
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_THAT(waits[0], HasSubstr("is being copied to pvc"));
  ASSERT_EQ(code_copies().size(), 1u);
  EXPECT_EQ(code_copies()[0].dst_path, "/mnt/shared/orch/code/" + kHash + ".tar");
  stage(job, "pvc");
  EXPECT_EQ(code_copies().size(), 1u);
}

TEST_F(CodeStagerTest, CodeNoJobUsedForAWeekIsRemovedAtItsSiteAndSentAgainWhenNeeded) {
  JobRow old = code_job();
  stage(old, "alpha");
  finish(code_copies()[0].id, TransferOutcome{1, 1.0, "local", 0});
  ASSERT_TRUE(store->set_job_state(old, JobState::cancelled, clock.now_ms()).ok());
  clock.advance_ms(8LL * 24 * 3600 * 1000);
  in_transaction([&] { return transfers->sweep_code(); });
  EXPECT_EQ(code_copies()[0].state, TransferState::cancelled);
  EXPECT_THAT(code_copies()[0].error, HasSubstr("pruned"));
  const auto removes = outbox("alpha", ActionKind::remove);
  ASSERT_EQ(removes.size(), 2u);
  std::set<std::string> paths;
  for (const auto& r : removes) {
    paths.insert(r.payload.at("path").get<std::string>());
    EXPECT_EQ(r.payload.at("within"), "/data/alpha/code");
  }
  EXPECT_EQ(paths, (std::set<std::string>{code_tree_path("/data/alpha", kHash),
                                          code_archive_path("/data/alpha", kHash)}));
  // A later job with that code sends it again.
  JobRow again = code_job();
  EXPECT_EQ(stage(again, "alpha").size(), 1u);
  EXPECT_EQ(code_copies().size(), 2u);
}

TEST_F(CodeStagerTest, CodeALiveOrRecentJobNamesIsKept) {
  JobRow live = code_job();
  stage(live, "alpha");
  finish(code_copies()[0].id, TransferOutcome{1, 1.0, "local", 0});
  JobRow ended = code_job(std::string(64, 'e'));
  stage(ended, "beta");
  finish(code_copies()[0].id, TransferOutcome{1, 1.0, "local", 0});
  clock.advance_ms(8LL * 24 * 3600 * 1000);
  ASSERT_TRUE(store->set_job_state(ended, JobState::cancelled, clock.now_ms()).ok());
  in_transaction([&] { return transfers->sweep_code(); });
  for (const auto& t : code_copies()) EXPECT_EQ(t.state, TransferState::done) << t.dst_cluster;
  EXPECT_TRUE(outbox("alpha", ActionKind::remove).empty());
  EXPECT_TRUE(outbox("beta", ActionKind::remove).empty());
}

TEST_F(CodeStagerTest, AJobWithoutCodeNeedsNothing) {
  JobRow job = add_job(make_job());
  EXPECT_TRUE(stage(job, "alpha").empty());
  EXPECT_TRUE(code_copies().empty());
}

}  // namespace
}  // namespace orch::testing
