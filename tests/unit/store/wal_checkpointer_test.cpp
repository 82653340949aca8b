// The WAL checkpointer: the writer's commits leave the checkpoints to a thread of their own, and
// the writer checkpoints itself only when the WAL has grown past the limit.
#include <gmock/gmock.h>

#include <filesystem>

#include "scheduler/store/wal_checkpointer.h"
#include "tests/harness/builders.h"

namespace orch {
namespace {

class WalCheckpointerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("orch-wal-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "state.db").string();
    store_ = std::move(Store::open(path_).value());
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // One transaction of enough jobs to write a few dozen pages to the WAL.
  void write_jobs(int n) {
    ASSERT_TRUE(store_
                    ->transaction([&]() -> Result<void> {
                      for (int i = 0; i < n; ++i) {
                        JobRow j;
                        j.name = "job-" + std::to_string(i);
                        j.spec = testing::make_job();
                        j.reason = std::string(300, 'r');
                        if (auto id = store_->insert_job(j); !id) return id.error();
                      }
                      return Ok{};
                    })
                    .ok());
  }

  std::filesystem::path dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
};

TEST_F(WalCheckpointerTest, ItsThreadCopiesTheWalIntoTheDatabaseOnceTheWalPassesItsStart) {
  WalCheckpointer::Options options;
  options.start_frames = 10;
  options.inline_frames = 1'000'000;
  auto checkpointer = WalCheckpointer::start(*store_, path_, options).value();
  const auto before = std::filesystem::file_size(path_);
  write_jobs(200);
  ASSERT_TRUE(checkpointer->wait_for_checkpoints(1, 10'000));
  EXPECT_EQ(checkpointer->inline_checkpoints(), 0u);
  EXPECT_GT(std::filesystem::file_size(path_), before) << "the pages reached the database file";
  EXPECT_EQ(store_->waiting_jobs().value().size(), 200u);
}

TEST_F(WalCheckpointerTest, TheWriterCheckpointsItselfPastTheLimit) {
  WalCheckpointer::Options options;
  options.start_frames = 1'000'000;
  options.inline_frames = 10;
  auto checkpointer = WalCheckpointer::start(*store_, path_, options).value();
  write_jobs(200);
  EXPECT_EQ(checkpointer->inline_checkpoints(), 1u);
  EXPECT_EQ(checkpointer->checkpoints(), 0u);
}

}  // namespace
}  // namespace orch
