// The data part on its own: a reported checkpoint gets a copy row where it was saved and a
// listing there; a listing that matches verifies the copy; datasets are checked before they
// are registered. What a launch may resume from and still needs is the stager's
// (data_stager_test.cpp).
#include <gmock/gmock.h>

#include "scheduler/brain/data_keeper.h"
#include "tests/harness/brain_part_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class DataKeeperTest : public BrainPartFixture {
 protected:
  void SetUp() override {
    // "kube" stands for a provider whose storage cannot be listed (no real one since issue 20).
    start({make_cluster("alpha").storage("/data/alpha"), make_cluster("beta").storage("/data/b"),
           make_cluster("kube").provider("unlisted")});
    data = std::make_unique<DataKeeper>(*core);
  }

  // A checkpoint at `step` reported by the attempt, registered by the data part.
  std::int64_t report_checkpoint(const AttemptRow& a, std::int64_t step, const std::string& path) {
    auto id = store->insert_checkpoint({0, a.job_id, a.id, step, path, 0.5, clock.now_ms()});
    std::int64_t checkpoint = id.value().value();
    in_transaction([&] { return data->register_checkpoint(a, checkpoint, path); });
    return checkpoint;
  }

  static Manifest one_file(std::uint64_t size) {
    Manifest m;
    m.files.push_back({"", size, std::string(64, 'a')});  // one file: the path itself
    return m;
  }

  std::unique_ptr<DataKeeper> data;
};

TEST_F(DataKeeperTest, AReportedCheckpointIsListedWhereItWasSaved) {
  JobRow job = add_job(make_job(), JobState::running);
  AttemptRow a = add_attempt(job, "alpha", 1, {"alpha-n0"});
  std::int64_t ckpt = report_checkpoint(a, 100, "/data/alpha/ckpt-100");

  auto copies = store->replicas_of_checkpoint(ckpt).value();
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].cluster, "alpha");
  EXPECT_EQ(copies[0].state, ReplicaState::present);
  auto listings = outbox("alpha", ActionKind::manifest);
  ASSERT_EQ(listings.size(), 1u);
  EXPECT_EQ(listings[0].payload.value("purpose", ""), "register");
  EXPECT_EQ(listings[0].payload.value("path", ""), "/data/alpha/ckpt-100");
}

TEST_F(DataKeeperTest, CopiesRecordedBeforeTheirDirectoryAreConfinedToTheJobsDirectories) {
  // Rows written before schema v25: neither the attempt nor the copy names a directory. The
  // listing and the deletion are confined to what the cluster's root gives the job: its own
  // directory, or orchestrate's replica directory for a copy orchestrate made there.
  JobRow job = add_job(make_job(), JobState::running);
  AttemptRow a = add_attempt(job, "alpha", 1, {"alpha-n0"});
  ASSERT_TRUE(a.checkpoint_dir.empty());
  const std::string own = "/data/alpha/checkpoints/job-" + std::to_string(job.id);
  EXPECT_EQ(data->checkpoint_dir_of(a), own);
  std::int64_t ckpt = report_checkpoint(a, 100, own + "/step-100");
  auto copy = store->replicas_of_checkpoint(ckpt).value().at(0);
  EXPECT_EQ(copy.confined_to, own) << "recorded from now on";

  ReplicaRow old = copy;  // a copy orchestrate made at beta, as an old row reads
  old.id = 0;
  old.confined_to.clear();
  old.cluster = "beta";
  old.path = "/data/b/checkpoints/.orchestrate/replicas/job-" + std::to_string(job.id) +
             "/step-100/step-100";
  in_transaction([&]() -> Result<void> {
    auto id = store->insert_replica(old);
    if (!id) return id.error();
    return Ok{};
  });
  in_transaction([&] { return data->start_due_audits(true, "beta"); });
  auto listings = outbox("beta", ActionKind::manifest);
  ASSERT_EQ(listings.size(), 1u);
  EXPECT_EQ(listings[0].payload.value("within", ""),
            "/data/b/checkpoints/.orchestrate/replicas/job-" + std::to_string(job.id));
}

TEST_F(DataKeeperTest, ACheckpointWhereStorageCannotBeListedIsRecordedUnverified) {
  JobRow job = add_job(make_job(), JobState::running);
  AttemptRow a = add_attempt(job, "kube", 1);
  std::int64_t ckpt = report_checkpoint(a, 10, "/ckpt/10");
  auto copies = store->replicas_of_checkpoint(ckpt).value();
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_THAT(copies[0].detail, HasSubstr("cannot list storage"));
  EXPECT_TRUE(outbox("kube", ActionKind::manifest).empty());
}

TEST_F(DataKeeperTest, ADatasetIsRefusedWithWhyBeforeAnythingIsWritten) {
  auto bad_name = data->on(RegisterDataset{"../etc", "alpha", "/data/x"});
  ASSERT_FALSE(bad_name.ok());
  EXPECT_EQ(bad_name.error().kind, ErrorKind::invalid);
  auto relative = data->on(RegisterDataset{"tiny", "alpha", "data/x"});
  ASSERT_FALSE(relative.ok());
  EXPECT_THAT(relative.error().message, HasSubstr("must be absolute"));
  auto unknown = data->on(RegisterDataset{"tiny", "gamma", "/data/x"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::not_found);
  auto no_storage = data->on(RegisterDataset{"tiny", "kube", "/data/x"});
  ASSERT_FALSE(no_storage.ok());
  EXPECT_EQ(no_storage.error().kind, ErrorKind::unsupported);
  EXPECT_TRUE(store->replicas_of_dataset("tiny").value().empty());
}

}  // namespace
}  // namespace orch::testing
