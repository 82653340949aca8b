#pragma once
// The real SchedulerBackend over a real brain, with a state file of its own per test: the brain
// writes through its Store, the backend reads through a StoreReader of its own, as the server's
// do. A test's fixture derives from it and calls open() from its SetUp with its clusters; the
// loop is not started until a test of commands starts it, so the tests hand events to the brain
// with handle() or write rows through store_.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/brain/brain.h"
#include "scheduler/common/clock.h"
#include "scheduler/runtime/brain_loop.h"
#include "scheduler/store/store.h"
#include "web/backend/scheduler_backend.h"

namespace orch {

class BackendFixture : public ::testing::Test {
 protected:
  // The brain and the backend over clusters; the loop would tick every loop_ms once started.
  void open(const std::vector<ClusterSpec>& clusters, Millis loop_ms = 60000) {
    dir_ =
        std::filesystem::temp_directory_path() /
        ("orch-backend-" +
         std::string(::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name()) +
         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    const std::string path = (dir_ / "state.db").string();
    store_ = std::move(Store::open(path).value());
    brain_ = std::make_unique<Brain>(*store_, clock_, clusters);
    ASSERT_TRUE(brain_->start().ok());
    loop_ = std::make_unique<BrainLoop>(*brain_, loop_ms, [] {});
    backend_ =
        std::make_unique<SchedulerBackend>(std::move(StoreReader::open(path).value()), *loop_,
                                           clusters, std::map<std::string, ClusterPort*>{}, clock_);
  }
  void TearDown() override {
    backend_.reset();
    loop_.reset();
    brain_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void handle(const BrainEvent& e) {
    auto r = brain_->handle(e);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }

  std::filesystem::path dir_;
  FakeClock clock_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Brain> brain_;
  std::unique_ptr<BrainLoop> loop_;
  std::unique_ptr<SchedulerBackend> backend_;
};

}  // namespace orch
