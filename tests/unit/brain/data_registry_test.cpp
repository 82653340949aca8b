// The data registry on its own: a reported checkpoint gets a copy row where it was saved,
// confined to its job's directory, and a listing there; where storage cannot be listed it is
// recorded unverified; a copy recorded before there were directories is confined to what the
// cluster's root gives its job; datasets are checked before they are registered. What a listing
// says is the verifier's (data_verifier_test.cpp); copies between sites the transfers'
// (data_transfers_test.cpp); what a launch may resume from the stager's (data_stager_test.cpp).
#include <gmock/gmock.h>

#include "scheduler/brain/data_registry.h"
#include "tests/harness/brain_part_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class DataRegistryTest : public BrainPartFixture {
 protected:
  void SetUp() override {
    // "kube" stands for a provider whose storage cannot be listed (no real one since issue 20).
    start({make_cluster("alpha").storage("/data/alpha"), make_cluster("beta").storage("/data/b"),
           make_cluster("kube").provider("unlisted")});
    registry = std::make_unique<DataRegistry>(*core);
  }

  // A checkpoint at `step` reported by the attempt, recorded by the registry.
  std::int64_t report_checkpoint(const AttemptRow& a, std::int64_t step, const std::string& path) {
    auto id = store->insert_checkpoint({0, a.job_id, a.id, step, path, 0.5, clock.now_ms()});
    std::int64_t checkpoint = id.value().value();
    in_transaction([&] { return registry->register_checkpoint(a, checkpoint, path); });
    return checkpoint;
  }

  std::unique_ptr<DataRegistry> registry;
};

TEST_F(DataRegistryTest, AReportedCheckpointIsListedWhereItWasSaved) {
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

TEST_F(DataRegistryTest, CopiesRecordedBeforeTheirDirectoryAreConfinedToTheJobsDirectories) {
  // Rows written before schema v25: neither the attempt nor the copy names a directory. The
  // listing and the deletion are confined to what the cluster's root gives the job: its own
  // directory, or orchestrate's replica directory for a copy orchestrate made there.
  JobRow job = add_job(make_job(), JobState::running);
  AttemptRow a = add_attempt(job, "alpha", 1, {"alpha-n0"});
  ASSERT_TRUE(a.checkpoint_dir.empty());
  const std::string own = "/data/alpha/checkpoints/job-" + std::to_string(job.id);
  EXPECT_EQ(registry->checkpoint_dir_of(a), own);
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
    old.id = *id;
    return Ok{};
  });
  const ReplicaRow& old_copy = old;
  EXPECT_EQ(registry->confinement_of(old_copy).value(),
            "/data/b/checkpoints/.orchestrate/replicas/job-" + std::to_string(job.id));
  in_transaction([&] { return registry->request_manifest(old_copy, ManifestPurpose::audit); });
  auto listings = outbox("beta", ActionKind::manifest);
  ASSERT_EQ(listings.size(), 1u);
  EXPECT_EQ(listings[0].payload.value("within", ""),
            "/data/b/checkpoints/.orchestrate/replicas/job-" + std::to_string(job.id));
}

TEST_F(DataRegistryTest, ACheckpointWhereStorageCannotBeListedIsRecordedUnverified) {
  JobRow job = add_job(make_job(), JobState::running);
  AttemptRow a = add_attempt(job, "kube", 1);
  std::int64_t ckpt = report_checkpoint(a, 10, "/ckpt/10");
  auto copies = store->replicas_of_checkpoint(ckpt).value();
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_THAT(copies[0].detail, HasSubstr("cannot list storage"));
  EXPECT_TRUE(outbox("kube", ActionKind::manifest).empty());
}

TEST_F(DataRegistryTest, ADatasetIsRefusedWithWhyBeforeAnythingIsWritten) {
  auto bad_name = registry->on(RegisterDataset{"../etc", "alpha", "/data/x"});
  ASSERT_FALSE(bad_name.ok());
  EXPECT_EQ(bad_name.error().kind, ErrorKind::invalid);
  auto relative = registry->on(RegisterDataset{"tiny", "alpha", "data/x"});
  ASSERT_FALSE(relative.ok());
  EXPECT_THAT(relative.error().message, HasSubstr("must be absolute"));
  auto unknown = registry->on(RegisterDataset{"tiny", "gamma", "/data/x"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::not_found);
  auto no_storage = registry->on(RegisterDataset{"tiny", "kube", "/data/x"});
  ASSERT_FALSE(no_storage.ok());
  EXPECT_EQ(no_storage.error().kind, ErrorKind::unsupported);
  EXPECT_TRUE(store->replicas_of_dataset("tiny").value().empty());
}

}  // namespace
}  // namespace orch::testing
