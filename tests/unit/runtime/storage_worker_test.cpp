// The storage worker: one site's `manifest` and `remove` actions from the outbox, carried out
// at the site and posted to the brain as events. It reads the store through its own connection
// and never writes it; a site that does not answer leaves the action for the next round. Driven
// one round at a time (run_once), no thread.
#include <gmock/gmock.h>

#include <filesystem>

#include "scheduler/runtime/storage_worker.h"
#include "scheduler/store/store.h"
#include "tests/harness/builders.h"
#include "tests/harness/fake_site.h"

namespace orch::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

Manifest one_file(std::uint64_t size) {
  Manifest m;
  m.directory = true;
  m.files = {{"model.bin", size, std::string(64, 'a')}};
  return m;
}

class StorageWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The worker reads through its own connection, so the state must be a real file.
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("orch-storage-worker-") +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    const std::string db = (dir_ / "state.db").string();
    store = std::move(Store::open(db).value());
    worker = std::make_unique<StorageWorker>(
        make_cluster("alpha"), site, std::move(StoreReader::open(db).value()),
        [this](BrainEvent e) { posted.push_back(std::move(e)); });
  }
  void TearDown() override {
    worker.reset();
    store.reset();
    std::filesystem::remove_all(dir_);
  }

  std::int64_t enqueue(ActionKind kind, nlohmann::json payload,
                       const std::string& cluster = "alpha") {
    return store->enqueue({0, cluster, kind, "", std::move(payload), 1000, std::nullopt}).value();
  }
  std::int64_t enqueue_manifest(const std::string& path,
                                nlohmann::json extra = nlohmann::json::object()) {
    nlohmann::json payload = {{"path", path}, {"checkpoint_id", 7}, {"purpose", "verify"}};
    if (extra.is_object()) payload.update(extra);
    return enqueue(ActionKind::manifest, payload);
  }
  // The one request the site got.
  ManifestRequest only_request() {
    EXPECT_THAT(site.manifest_requests, SizeIs(1));
    return site.manifest_requests.empty() ? ManifestRequest{} : site.manifest_requests[0];
  }
  template <typename E>
  std::vector<E> posted_of() {
    std::vector<E> out;
    for (const auto& e : posted) {
      if (const E* x = std::get_if<E>(&e)) out.push_back(*x);
    }
    return out;
  }

  std::filesystem::path dir_;
  FakeSite site;
  std::unique_ptr<Store> store;
  std::vector<BrainEvent> posted;
  std::unique_ptr<StorageWorker> worker;
};

TEST_F(StorageWorkerTest, APendingManifestActionIsCarriedOutAndPostedWithItsPayload) {
  site.manifests.insert_or_assign("/ckpt/step-300", Result<Manifest>(one_file(4096)));
  const std::int64_t id = enqueue_manifest("/ckpt/step-300");

  worker->run_once();

  EXPECT_EQ(only_request().path, "/ckpt/step-300");
  ASSERT_THAT(posted, SizeIs(1));
  auto done = posted_of<ManifestCompleted>();
  ASSERT_THAT(done, SizeIs(1));
  EXPECT_EQ(done[0].outbox_id, id);
  EXPECT_EQ(done[0].cluster, "alpha");
  EXPECT_EQ(done[0].payload, store->action(id).value()->payload) << "echoed for the brain";
  ASSERT_TRUE(done[0].result.ok());
  ASSERT_THAT(done[0].result->files, SizeIs(1));
  EXPECT_EQ(done[0].result->files[0].path, "model.bin");
  EXPECT_EQ(done[0].result->files[0].size, 4096u);
}

TEST_F(StorageWorkerTest, WithoutAHashFieldEveryFileIsHashed) {
  enqueue_manifest("/data/imagenet");

  worker->run_once();

  EXPECT_EQ(only_request().hash, ManifestRequest::Hash::all);
  EXPECT_THAT(only_request().hash_files, IsEmpty());
}

TEST_F(StorageWorkerTest, HashAllHashesEveryFile) {
  enqueue_manifest("/data/imagenet", {{"hash", "all"}});

  worker->run_once();

  EXPECT_EQ(only_request().hash, ManifestRequest::Hash::all);
}

TEST_F(StorageWorkerTest, HashListedHashesOnlyTheNamedFiles) {
  enqueue_manifest("/data/imagenet",
                   {{"hash", "listed"}, {"hash_files", {"shard-3.bin", "shard-9.bin"}}});

  worker->run_once();

  EXPECT_EQ(only_request().path, "/data/imagenet");
  EXPECT_EQ(only_request().hash, ManifestRequest::Hash::listed);
  EXPECT_THAT(only_request().hash_files, ElementsAre("shard-3.bin", "shard-9.bin"));
}

TEST_F(StorageWorkerTest, HashNoneListsSizesOnly) {
  enqueue_manifest("/data/imagenet", {{"hash", "none"}});

  worker->run_once();

  EXPECT_EQ(only_request().hash, ManifestRequest::Hash::none);
}

TEST_F(StorageWorkerTest, AnUnknownHashModeIsRefusedNotTakenForAll) {
  enqueue_manifest("/data/imagenet", {{"hash", "some"}});

  worker->run_once();

  EXPECT_THAT(site.manifest_requests, IsEmpty()) << "the site is not asked";
  auto done = posted_of<ManifestCompleted>();
  ASSERT_THAT(done, SizeIs(1));
  ASSERT_FALSE(done[0].result.ok());
  EXPECT_EQ(done[0].result.error().kind, ErrorKind::invalid);
  EXPECT_THAT(done[0].result.error().message, ::testing::HasSubstr("unknown hash mode \"some\""));
}

TEST_F(StorageWorkerTest, ASiteErrorOtherThanUnreachableIsPostedAsTheResult) {
  site.manifests.insert_or_assign(
      "/ckpt/gone", Result<Manifest>(make_error(ErrorKind::not_found, "/ckpt/gone: no such file")));
  enqueue_manifest("/ckpt/gone");

  worker->run_once();

  auto done = posted_of<ManifestCompleted>();
  ASSERT_THAT(done, SizeIs(1));
  ASSERT_FALSE(done[0].result.ok());
  EXPECT_EQ(done[0].result.error().kind, ErrorKind::not_found);
}

TEST_F(StorageWorkerTest, ARemoveActionDeletesThePathAndPostsRemoveCompleted) {
  const std::int64_t id = enqueue(ActionKind::remove, {{"path", "/ckpt/step-100"}, {"replica", 4}});

  worker->run_once();

  EXPECT_THAT(site.removed, ElementsAre("/ckpt/step-100"));
  EXPECT_THAT(site.manifest_requests, IsEmpty());
  auto done = posted_of<RemoveCompleted>();
  ASSERT_THAT(done, SizeIs(1));
  ASSERT_THAT(posted, SizeIs(1));
  EXPECT_EQ(done[0].outbox_id, id);
  EXPECT_EQ(done[0].cluster, "alpha");
  EXPECT_EQ(done[0].payload, store->action(id).value()->payload);
  EXPECT_TRUE(done[0].result.ok());
}

TEST_F(StorageWorkerTest, TheDirectoryACopyMustLieInGoesToTheSite) {
  enqueue_manifest("/ckpt/job-7/step-300", {{"within", "/ckpt/job-7"}});
  enqueue(ActionKind::remove, {{"path", "/ckpt/job-7/step-100"}, {"within", "/ckpt/job-7"}});
  enqueue(ActionKind::remove, {{"path", "/ckpt/job-7/step-50"}});  // queued by an older server

  worker->run_once();

  EXPECT_EQ(only_request().within, "/ckpt/job-7");
  ASSERT_THAT(site.remove_requests, SizeIs(2));
  EXPECT_EQ(site.remove_requests[0].within, "/ckpt/job-7");
  EXPECT_EQ(site.remove_requests[1].within, "") << "the site refuses a deletion with none";
}

TEST_F(StorageWorkerTest, ARefusedRemoveIsPostedWithTheRefusal) {
  site.remove_result = make_error(ErrorKind::invalid, "refusing to delete a relative path");
  enqueue(ActionKind::remove, {{"path", "ckpt"}});

  worker->run_once();

  auto done = posted_of<RemoveCompleted>();
  ASSERT_THAT(done, SizeIs(1));
  ASSERT_FALSE(done[0].result.ok());
  EXPECT_EQ(done[0].result.error().kind, ErrorKind::invalid);
}

TEST_F(StorageWorkerTest, AnUnreachableSitePostsNothingAndTheActionIsTriedAgainNextRound) {
  site.manifests.insert_or_assign("/ckpt/step-300", Result<Manifest>(one_file(4096)));
  enqueue_manifest("/ckpt/step-300");
  enqueue(ActionKind::remove, {{"path", "/ckpt/step-100"}});
  site.down = true;

  worker->run_once();
  worker->run_once();
  EXPECT_THAT(posted, IsEmpty());

  site.down = false;
  worker->run_once();

  EXPECT_THAT(site.manifest_requests, SizeIs(1));
  EXPECT_THAT(site.removed, ElementsAre("/ckpt/step-100"));
  EXPECT_THAT(posted_of<ManifestCompleted>(), SizeIs(1));
  EXPECT_THAT(posted_of<RemoveCompleted>(), SizeIs(1));
}

TEST_F(StorageWorkerTest, LaunchCancelAndProbeActionsAreLeftToTheSiteWorker) {
  enqueue(ActionKind::launch, {{"token", "orch-1-1-abc"}});
  enqueue(ActionKind::cancel, {});
  enqueue(ActionKind::probe, {{"token", "burn-in-1"}});

  worker->run_once();

  EXPECT_THAT(posted, IsEmpty());
  EXPECT_THAT(site.launched, IsEmpty());
  EXPECT_THAT(site.cancelled, IsEmpty());
  EXPECT_THAT(site.found, IsEmpty());
  EXPECT_THAT(site.probed, IsEmpty());
  EXPECT_THAT(site.manifest_requests, IsEmpty());
  EXPECT_THAT(site.removed, IsEmpty());
}

TEST_F(StorageWorkerTest, OnlyThisSitesActionsAreCarriedOut) {
  enqueue(ActionKind::manifest, {{"path", "/on/beta"}}, "beta");
  enqueue(ActionKind::remove, {{"path", "/on/beta"}}, "beta");

  worker->run_once();

  EXPECT_THAT(posted, IsEmpty());
  EXPECT_THAT(site.manifest_requests, IsEmpty());
  EXPECT_THAT(site.removed, IsEmpty());
}

TEST_F(StorageWorkerTest, ActionsAreCarriedOutOldestFirst) {
  const std::int64_t first = enqueue_manifest("/ckpt/a");
  const std::int64_t second = enqueue(ActionKind::remove, {{"path", "/ckpt/b"}});
  const std::int64_t third = enqueue_manifest("/ckpt/c");

  worker->run_once();

  ASSERT_THAT(posted, SizeIs(3));
  EXPECT_EQ(std::get<ManifestCompleted>(posted[0]).outbox_id, first);
  EXPECT_EQ(std::get<RemoveCompleted>(posted[1]).outbox_id, second);
  EXPECT_EQ(std::get<ManifestCompleted>(posted[2]).outbox_id, third);
}

TEST_F(StorageWorkerTest, AnActionAlreadyPostedIsNotRepeatedWhileTheBrainHasNotMarkedItDone) {
  enqueue_manifest("/ckpt/step-300");
  enqueue(ActionKind::remove, {{"path", "/ckpt/step-100"}});

  worker->run_once();
  worker->run_once();
  worker->run_once();

  EXPECT_THAT(site.manifest_requests, SizeIs(1));
  EXPECT_THAT(site.removed, SizeIs(1));
  EXPECT_THAT(posted, SizeIs(2));
}

TEST_F(StorageWorkerTest, AnActionMarkedDoneIsNotCarriedOutAgain) {
  const std::int64_t id = enqueue_manifest("/ckpt/step-300");
  worker->run_once();
  ASSERT_TRUE(store->mark_action_done(id, 2000).ok());

  for (int i = 0; i < 150; ++i) worker->run_once();

  EXPECT_THAT(site.manifest_requests, SizeIs(1));
  EXPECT_THAT(posted, SizeIs(1));
}

TEST_F(StorageWorkerTest, AnActionPostedButStillPendingLongAfterIsCarriedOutAgain) {
  // The brain's transaction that should have marked it done may have failed; listings and
  // deletions are idempotent, so doing it again is safe. Not soon, though.
  enqueue_manifest("/ckpt/step-300");
  worker->run_once();

  for (int i = 0; i < 50; ++i) worker->run_once();
  EXPECT_THAT(site.manifest_requests, SizeIs(1)) << "not repeated soon";

  for (int i = 0; i < 100; ++i) worker->run_once();
  EXPECT_THAT(site.manifest_requests, SizeIs(2)) << "repeated once, much later";
  EXPECT_THAT(posted, SizeIs(2));
}

TEST_F(StorageWorkerTest, TheWorkerNeverWritesTheStore) {
  const std::int64_t id = enqueue_manifest("/ckpt/step-300");

  worker->run_once();

  auto pending = store->pending_actions("alpha").value();
  ASSERT_THAT(pending, SizeIs(1));
  EXPECT_EQ(pending[0].id, id);
  EXPECT_FALSE(pending[0].done_ms.has_value()) << "marking it done is the brain's part";
}

}  // namespace
}  // namespace orch::testing
