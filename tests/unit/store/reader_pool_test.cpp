// The pool of read connections: one per concurrent reader, at most max, reused.
#include "scheduler/store/reader_pool.h"
#include "scheduler/store/store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <optional>
#include <thread>
#include <vector>

namespace orch {
namespace {

class ReaderPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("orch-reader-pool-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "state.db").string();
    writer_ = std::move(Store::open(path_).value());
  }
  void TearDown() override {
    writer_.reset();
    std::filesystem::remove_all(dir_);
  }
  ReaderPool::Opener opener() {
    return [this] {
      ++opens_;
      return StoreReader::open(path_);
    };
  }

  std::filesystem::path dir_;
  std::string path_;
  std::unique_ptr<Store> writer_;
  std::atomic<int> opens_{0};
};

TEST_F(ReaderPoolTest, OpensAConnectionPerConcurrentLeaseAndReusesThem) {
  ReaderPool pool(opener(), 4);
  {
    auto a = pool.lease();
    auto b = pool.lease();
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_NE(&**a, &**b);
    EXPECT_EQ(pool.opened(), 2u);
  }
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(pool.lease().ok());
  EXPECT_EQ(opens_, 2);
}

TEST_F(ReaderPoolTest, ReadersSeeWhatTheWriterCommitted) {
  ReaderPool pool(opener(), 2);
  ASSERT_TRUE(writer_->ensure_cluster("alpha").ok());
  auto lease = pool.lease();
  ASSERT_TRUE(lease.ok());
  auto clusters = (*lease)->clusters();
  ASSERT_TRUE(clusters.ok());
  ASSERT_EQ(clusters->size(), 1u);
  EXPECT_EQ(clusters->at(0).name, "alpha");
}

TEST_F(ReaderPoolTest, NeverOpensMoreThanMaxUnderContention) {
  ReaderPool pool(opener(), 3);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        auto lease = pool.lease();
        if (!lease || !(*lease)->clusters().ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_LE(opens_, 3);
}

TEST_F(ReaderPoolTest, AFailedOpenIsReportedAndFreesItsPlace) {
  int calls = 0;
  ReaderPool pool(
      [&]() -> Result<std::unique_ptr<StoreReader>> {
        if (++calls == 1) return make_error(ErrorKind::io, "disk on fire");
        return StoreReader::open(path_);
      },
      1);
  auto first = pool.lease();
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().message, "disk on fire");
  EXPECT_TRUE(pool.lease().ok());
}

TEST_F(ReaderPoolTest, APoolOfOneConnectionHandsItOutInTurn) {
  ReaderPool pool(std::move(StoreReader::open(path_).value()));
  StoreReader* first = nullptr;
  {
    auto lease = pool.lease();
    ASSERT_TRUE(lease.ok());
    first = &**lease;
  }
  auto again = pool.lease();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(&**again, first);
}

}  // namespace
}  // namespace orch
