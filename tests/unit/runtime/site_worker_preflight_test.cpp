// When a site worker runs its site's preflight (`cluster check`, issue 40): at its first round,
// on request (a reload), again after a launch met the server's own misconfiguration, and not at
// every round; what it found goes to the brain, which keeps the cluster from jobs until it
// passes. A real worker and brain over a scripted FakeSite, stepped by hand.
#include <gmock/gmock.h>

#include <deque>
#include <filesystem>

#include "scheduler/runtime/site_worker.h"
#include "tests/harness/brain_fixture.h"
#include "tests/harness/fake_site.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class SiteWorkerPreflight : public BrainFixture {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("orch-preflight-") +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    const std::string db = (dir_ / "state.db").string();
    store = std::move(Store::open(db).value());
    ClusterSpec alpha = make_cluster("alpha");
    brain = std::make_unique<Brain>(*store, clock, std::vector<ClusterSpec>{alpha});
    ASSERT_TRUE(brain->start().ok());
    site_.preflight_checks = {check_failed("key-file", "cannot read /keys/alpha")};
    worker_ = std::make_unique<SiteWorker>(alpha, site_, std::move(StoreReader::open(db).value()),
                                           [this](BrainEvent e) { posted_.push_back(e); });
  }
  void TearDown() override {
    worker_.reset();
    brain.reset();
    store.reset();
    std::filesystem::remove_all(dir_);
  }
  void round() {
    worker_->run_once();
    while (!posted_.empty()) {
      BrainEvent e = std::move(posted_.front());
      posted_.pop_front();
      handle(e);
    }
  }

  std::filesystem::path dir_;
  FakeSite site_;
  std::unique_ptr<SiteWorker> worker_;
  std::deque<BrainEvent> posted_;
};

TEST_F(SiteWorkerPreflight, TheFirstRoundChecksAndTheBrainHoldsJobsUntilACheckPasses) {
  round();
  EXPECT_EQ(site_.preflight_calls, 1);
  EXPECT_THAT(store->cluster("alpha").value()->message, HasSubstr("misconfigured: key-file"));
  JobId id = submit(make_job());
  round();
  EXPECT_EQ(site_.preflight_calls, 1);  // not at every round
  EXPECT_EQ(job(id).state, JobState::pending);
  EXPECT_TRUE(site_.launch_calls.empty());

  site_.preflight_checks = {check_passed("key-file", "readable")};
  worker_->request_preflight();  // a reload of the clusters file
  round();
  EXPECT_EQ(site_.preflight_calls, 2);
  round();  // the launch the passing check let the brain write
  EXPECT_EQ(site_.launch_calls.size(), 1u);
  EXPECT_EQ(store->cluster("alpha").value()->message, "");
}

TEST_F(SiteWorkerPreflight, AMisconfiguredLaunchIsCheckedAgainAtTheNextRound) {
  site_.preflight_checks = {};  // nothing to check: the brain hears nothing
  round();
  JobId id = submit(make_job().infra_restarts(1));
  site_.launch_error = make_error(ErrorKind::misconfigured, "site alpha: cannot read the key");
  round();
  EXPECT_EQ(job(id).state, JobState::pending);
  EXPECT_EQ(job(id).infra_restarts, 0);
  EXPECT_EQ(site_.preflight_calls, 1);

  site_.launch_error.reset();
  round();  // the preflight runs, passes, and lets the job be placed again
  EXPECT_EQ(site_.preflight_calls, 2);
  round();
  EXPECT_EQ(site_.launch_calls.size(), 2u);
  EXPECT_EQ(job(id).infra_restarts, 0);
}

TEST_F(SiteWorkerPreflight, ASiteBackFromSilenceIsCheckedAgainAtOnce) {
  site_.preflight_checks = {check_failed("port", "login:22 does not accept connections")};
  round();
  site_.down = true;
  round();
  EXPECT_EQ(store->cluster("alpha").value()->health, SiteHealth::unreachable);
  site_.down = false;
  site_.preflight_checks = {check_passed("port", "login:22 answers")};
  round();  // it answers again: the closed port was the outage
  round();
  EXPECT_EQ(site_.preflight_calls, 2);
  EXPECT_EQ(store->cluster("alpha").value()->message, "");
}

}  // namespace
}  // namespace orch::testing
