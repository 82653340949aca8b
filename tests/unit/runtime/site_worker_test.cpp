// Site worker + brain over a scripted site, stepped by hand: one worker round, then the brain
// handles what the worker posted. No threads, no sleeps; the clock is fake.
#include <gmock/gmock.h>

#include <deque>
#include <filesystem>

#include "scheduler/runtime/site_worker.h"
#include "tests/harness/brain_fixture.h"
#include "tests/harness/fake_site.h"

namespace orch::testing {
namespace {

class SiteWorkerTest : public BrainFixture {
 protected:
  void SetUp() override {
    // The worker reads through its own connection, so the state must be a real file.
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("orch-worker-") +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::string db = (dir_ / "state.db").string();
    store = std::move(Store::open(db).value());
    ClusterSpec alpha = make_cluster("alpha").grace_s(5), beta = make_cluster("beta").grace_s(5);
    brain = std::make_unique<Brain>(*store, clock, std::vector<ClusterSpec>{alpha, beta});
    ASSERT_TRUE(brain->start().ok());
    alpha_worker_ =
        std::make_unique<SiteWorker>(alpha, alpha_, std::move(Store::open(db).value()),
                                     [this](BrainEvent e) { posted_.push_back(std::move(e)); });
    beta_worker_ =
        std::make_unique<SiteWorker>(beta, beta_, std::move(Store::open(db).value()),
                                     [this](BrainEvent e) { posted_.push_back(std::move(e)); });
  }
  void TearDown() override {
    alpha_worker_.reset();
    beta_worker_.reset();
    brain.reset();
    store.reset();
    std::filesystem::remove_all(dir_);
  }

  // One round of every worker, then the brain takes everything they posted.
  void round() {
    alpha_worker_->run_once();
    beta_worker_->run_once();
    while (!posted_.empty()) {
      BrainEvent e = std::move(posted_.front());
      posted_.pop_front();
      handle(e);
    }
  }

  std::filesystem::path dir_;
  FakeSite alpha_, beta_;
  std::deque<BrainEvent> posted_;
  std::unique_ptr<SiteWorker> alpha_worker_, beta_worker_;
};

TEST_F(SiteWorkerTest, LaunchesFromTheOutboxAndReportsRunning) {
  JobId id = submit(make_job());
  round();
  ASSERT_EQ(alpha_.launched.size(), 1u);
  EXPECT_EQ(alpha_.launched[0], last_attempt(id).token);
  round();
  EXPECT_EQ(job(id).state, JobState::running);
  EXPECT_TRUE(outbox("alpha").empty());
}

TEST_F(SiteWorkerTest, ProgressLinesReachTheBrainOnceEach) {
  JobId id = submit(make_job());
  round();
  std::string token = last_attempt(id).token;
  alpha_.print(token, "plain log line");
  alpha_.print(token,
               R"(@orchestrate {"event":"progress","step":1,"tokens":100,"step_time_s":0.5})");
  alpha_.print(token, R"(@orchestrate {"event":"checkpoint","step":1,"path":"/c/1"})");
  round();
  round();
  EXPECT_EQ(last_attempt(id).last_step, 1);
  EXPECT_DOUBLE_EQ(last_attempt(id).tokens_total, 100);
  EXPECT_EQ(store->checkpoints_of(id).value().size(), 1u);
}

TEST_F(SiteWorkerTest, ABadProgressLineBecomesAnEvent) {
  JobId id = submit(make_job());
  round();
  alpha_.print(last_attempt(id).token, "@orchestrate {\"event\":\"progress\"}");
  round();
  EXPECT_THAT(event_kinds(id), ::testing::Contains("bad-progress-line"));
}

TEST_F(SiteWorkerTest, ALaunchTheSiteAlreadyHasIsAdoptedNotRepeated) {
  // The server launched, then crashed before recording it: the site knows the token.
  JobId id = submit(make_job());
  std::string token = last_attempt(id).token;
  alpha_.runs[token].obs.phase = RunPhase::running;
  alpha_.runs[token].obs.site_job_id = "job-before-crash";
  round();
  EXPECT_TRUE(alpha_.launched.empty());
  EXPECT_EQ(last_attempt(id).site_job_id, "job-before-crash");
  EXPECT_THAT(event_kinds(id), ::testing::Contains("adopted"));
}

TEST_F(SiteWorkerTest, SiteDownPastGraceMovesTheJobToTheOtherSite) {
  JobId id = submit(make_job().backoff(0));
  round();
  round();
  alpha_.down = true;
  round();
  EXPECT_EQ(store->cluster("alpha").value()->health, SiteHealth::unreachable);
  clock.advance_ms(5'000);
  handle(Tick{});
  round();
  EXPECT_EQ(last_attempt(id).cluster, "beta");
  EXPECT_EQ(beta_.launched.size(), 1u);
  round();
  EXPECT_EQ(job(id).state, JobState::running);
}

TEST_F(SiteWorkerTest, LaunchWhileTheSiteIsDownIsRetriedNotLost) {
  alpha_.down = true;
  beta_.down = true;
  JobId id = submit(make_job());
  round();
  EXPECT_TRUE(alpha_.launched.empty());
  EXPECT_EQ(outbox("alpha").size(), 1u) << "the launch stays in the outbox";
  alpha_.down = false;
  round();
  EXPECT_EQ(alpha_.launched.size(), 1u);
  EXPECT_EQ(last_attempt(id).site_job_id, "job-" + last_attempt(id).token);
}

TEST_F(SiteWorkerTest, CancelIsCarriedOutAndTheExitEndsTheAttemptAsCancelled) {
  JobId id = submit(make_job());
  round();
  handle(CancelJob{id});
  round();
  std::string token = last_attempt(id).token;
  EXPECT_THAT(alpha_.cancelled, ::testing::Contains(token));
  alpha_.exit(token, 143);
  round();
  EXPECT_EQ(last_attempt(id).cause, ExitCause::cancelled);
  EXPECT_EQ(job(id).state, JobState::cancelled);
}

TEST_F(SiteWorkerTest, ExitCodeZeroSucceedsTheJob) {
  JobId id = submit(make_job());
  round();
  alpha_.exit(last_attempt(id).token, 0);
  round();
  EXPECT_EQ(job(id).state, JobState::succeeded);
}

TEST_F(SiteWorkerTest, APartitionedSitesStaleRunIsStoppedWhenTheSiteReturns) {
  // The site stops answering but its processes keep running (a network partition).
  JobId id = submit(make_job().backoff(0));
  round();
  round();
  std::string stale = last_attempt(id).token;
  alpha_.down = true;
  round();
  clock.advance_ms(5'000);
  handle(Tick{});
  round();
  EXPECT_EQ(last_attempt(id).cluster, "beta");
  EXPECT_EQ(attempts(id).at(0).cause, ExitCause::site_down);
  EXPECT_FALSE(attempts(id).at(0).site_done) << "still watched: it may run on";

  alpha_.down = false;
  round();  // alpha answers: the stale run is seen running and a cancel is queued
  round();  // the cancel is carried out
  EXPECT_THAT(alpha_.cancelled, ::testing::Contains(stale));
  alpha_.exit(stale, 143);
  round();
  EXPECT_TRUE(attempts(id).at(0).site_done);
  EXPECT_EQ(store->watched_attempts("alpha").value().size(), 0u);
  EXPECT_EQ(job(id).state, JobState::running) << "the job itself lives on at beta";
}

TEST_F(SiteWorkerTest, AJobCancelledBeforeItsLaunchIsNeverStarted) {
  alpha_.down = true;
  beta_.down = true;
  JobId id = submit(make_job());
  round();
  handle(CancelJob{id});
  alpha_.down = false;
  round();
  round();
  EXPECT_TRUE(alpha_.launched.empty());
  EXPECT_EQ(last_attempt(id).cause, ExitCause::cancelled);
  EXPECT_TRUE(outbox("alpha").empty());
  EXPECT_EQ(job(id).state, JobState::cancelled);
}

TEST_F(SiteWorkerTest, TheSitesNodesAreRecordedAndANodeThatVanishesIsUnhealthy) {
  round();
  auto nodes = store->nodes("alpha").value();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].name, "n0");
  EXPECT_TRUE(nodes[0].healthy);

  alpha_.inventory_nodes = {{"n1", 8, false, "drained: bad cable"}};
  for (int i = 0; i <= 60; ++i) round();  // a site with nothing running is asked every round
  nodes = store->nodes("alpha").value();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_FALSE(nodes[0].healthy);
  EXPECT_EQ(nodes[0].reason, "no longer listed by the site");
  EXPECT_EQ(nodes[1].name, "n1");
  EXPECT_EQ(nodes[1].reason, "drained: bad cable");
}

TEST(ParseOutputLines, SplitsReportsFromBadLinesAndIgnoresTheRest) {
  std::vector<ProgressLine> reports;
  std::vector<std::string> bad;
  parse_output_lines(
      {"hello", R"(@orchestrate {"event":"progress","step":3})", "@orchestrate nope"}, reports,
      bad);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(std::get<ProgressReport>(reports[0]).step, 3);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_THAT(bad[0], ::testing::HasSubstr("not valid JSON"));
}

}  // namespace
}  // namespace orch::testing
