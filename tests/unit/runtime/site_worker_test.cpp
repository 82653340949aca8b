// Site worker + brain over a scripted site, stepped by hand: one worker round, then the brain
// handles what the worker posted. No threads, no sleeps; the clock is fake.
#include <gmock/gmock.h>

#include <deque>
#include <filesystem>

#include "scheduler/model/launch_request_json.h"
#include "scheduler/runtime/site_worker.h"
#include "scheduler/secrets/secret_registry.h"
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
        std::make_unique<SiteWorker>(alpha, alpha_, std::move(StoreReader::open(db).value()),
                                     [this](BrainEvent e) { posted_.push_back(std::move(e)); });
    beta_worker_ =
        std::make_unique<SiteWorker>(beta, beta_, std::move(StoreReader::open(db).value()),
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

  // A launch row for alpha that resumes: the site holds checkpoint 30 at /ckpt/step-300 just
  // as registered, so the resume check chooses it. Straight into the outbox (no attempt row):
  // what the worker posts is read from posted_, without the brain.
  std::int64_t enqueue_resuming_launch(const std::string& token,
                                       std::optional<std::int64_t> floor = std::nullopt) {
    Manifest files;
    files.directory = true;
    files.files = {{"model.bin", 4096, std::string(64, 'a')}};
    LaunchRequest r;
    r.token = token;
    r.job_id = 99;
    r.attempt_no = 2;
    r.command = "train";
    r.resume_candidates = {ResumeCandidate{30, 300, "/ckpt/step-300", files}};
    r.resume_floor_step = floor;
    r.resume_floor_reason = "step 400 is held at beta";
    alpha_.manifests.insert_or_assign("/ckpt/step-300", Result<Manifest>(files));
    return store
        ->enqueue(
            {0, "alpha", ActionKind::launch, token, launch_request_to_json(r), 1000, std::nullopt})
        .value();
  }
  // The one LaunchCompleted the workers posted (and not yet handed to the brain).
  std::optional<LaunchCompleted> posted_launch() {
    std::optional<LaunchCompleted> found;
    for (const auto& e : posted_) {
      if (const auto* l = std::get_if<LaunchCompleted>(&e)) {
        EXPECT_FALSE(found) << "more than one LaunchCompleted";
        found = *l;
      }
    }
    return found;
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

// The real registry: what a launch gets is what the job's team is granted at that moment.
class SiteWorkerSecretsTest : public SiteWorkerTest {
 protected:
  void SetUp() override {
    SiteWorkerTest::SetUp();
    registry_ = std::make_unique<SecretRegistry>(
        std::move(SecretStore::open(":memory:", clock).value()), clock);
    ASSERT_TRUE(registry_->set("hf", "hf-value", {"nlp"}, "ada").ok());
    alpha_worker_->set_secrets(registry_.get());
    beta_worker_->set_secrets(registry_.get());
  }
  JobId submit_for(const std::string& team) {
    JobSpec spec = make_job().team(team);
    spec.secret_env = {{"HF_TOKEN", "hf"}};
    return submit(spec);
  }
  std::unique_ptr<SecretRegistry> registry_;
};

TEST_F(SiteWorkerSecretsTest, ALaunchGetsItsGrantedSecretsAndOnlyTheSiteSeesThem) {
  const JobId id = submit_for("nlp");
  for (const auto& row : store->pending_actions("alpha").value()) {
    EXPECT_EQ(row.payload.dump().find("hf-value"), std::string::npos) << "the outbox keeps names";
  }
  round();
  ASSERT_EQ(alpha_.launched.size(), 1u);
  const LaunchRequest& sent = alpha_.runs.at(alpha_.launched[0]).request;
  EXPECT_EQ(sent.secret_env, (std::map<std::string, std::string>{{"HF_TOKEN", "hf-value"}}));
  for (const auto& e : store->events_of(id).value()) {
    EXPECT_EQ(e.message.find("hf-value"), std::string::npos) << e.message;
  }
}

TEST_F(SiteWorkerSecretsTest, AGrantTakenBackAfterSubmitStopsTheLaunch) {
  const JobId id = submit_for("nlp");
  ASSERT_TRUE(registry_->grant("hf", {"vision"}, "ada").ok());
  round();
  EXPECT_TRUE(alpha_.launched.empty()) << "nothing started without its secret";
  bool said_why = false;
  for (const auto& e : store->events_of(id).value()) {
    said_why = said_why || e.message.find("not granted to team nlp") != std::string::npos;
  }
  EXPECT_TRUE(said_why);
}

TEST_F(SiteWorkerTest, ProgressLinesReachTheBrainOnceEach) {
  JobId id = submit(make_job());
  round();
  std::string token = last_attempt(id).token;
  alpha_.print(token, "plain log line");
  alpha_.print(token,
               R"(@orchestrate {"event":"progress","step":1,"tokens":100,"step_time_s":0.5})");
  // In the job's own checkpoint directory (ORCH_CHECKPOINT_DIR), as every checkpoint must be.
  const std::string dir = last_attempt(id).checkpoint_dir;
  alpha_.print(token, R"(@orchestrate {"event":"checkpoint","step":1,"path":")" + dir + R"(/1"})");
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
  EXPECT_THAT(alpha_.launch_calls, ::testing::ElementsAre(token)) << "launch() returned it";
  EXPECT_TRUE(alpha_.found.empty()) << "no find() before the launch";
  EXPECT_EQ(last_attempt(id).site_job_id, "job-before-crash");
  EXPECT_THAT(event_kinds(id), ::testing::Contains("adopted"));
}

TEST_F(SiteWorkerTest, ALaunchAsksTheSiteOnce) {
  // launch() is idempotent per token (cluster_port.h), so nothing asks find() before it: one
  // call to the site per launch (one SSH round trip on Slurm, not two).
  JobId id = submit(make_job());
  alpha_worker_->run_once();
  std::string token = last_attempt(id).token;
  EXPECT_THAT(alpha_.launch_calls, ::testing::ElementsAre(token));
  EXPECT_THAT(alpha_.launched, ::testing::ElementsAre(token));
  EXPECT_TRUE(alpha_.found.empty());
  auto completed = posted_launch();
  ASSERT_TRUE(completed);
  EXPECT_FALSE(completed->adopted);
  ASSERT_TRUE(completed->result.ok());
  EXPECT_EQ(completed->result->site_job_id, "job-" + token);
  round();
  EXPECT_THAT(event_kinds(id), ::testing::Contains("launched"));
  EXPECT_THAT(event_kinds(id), ::testing::Not(::testing::Contains("adopted")));
}

TEST_F(SiteWorkerTest, AResumingLaunchPassesTheCheckedCheckpointAndReportsTheChoice) {
  const std::string token = "orch-99-2-fresh";
  std::int64_t action = enqueue_resuming_launch(token);
  alpha_worker_->run_once();
  EXPECT_THAT(alpha_.launch_calls, ::testing::ElementsAre(token));
  EXPECT_TRUE(alpha_.found.empty());
  ASSERT_TRUE(alpha_.runs.count(token));
  EXPECT_EQ(alpha_.runs[token].request.env["ORCH_RESUME_FROM"], "/ckpt/step-300");
  auto completed = posted_launch();
  ASSERT_TRUE(completed);
  EXPECT_EQ(completed->outbox_id, action);
  EXPECT_FALSE(completed->adopted);
  EXPECT_EQ(completed->resume.checkpoint_id, 30);
  EXPECT_EQ(completed->resume.path, "/ckpt/step-300");
}

TEST_F(SiteWorkerTest, ALaunchWhoseBestCheckedCheckpointIsBelowItsFloorIsHandedBack) {
  const std::string token = "orch-99-2-floor";
  std::int64_t action = enqueue_resuming_launch(token, 400);
  alpha_worker_->run_once();
  EXPECT_TRUE(alpha_.launch_calls.empty()) << "nothing is launched";
  auto completed = posted_launch();
  ASSERT_TRUE(completed);
  EXPECT_EQ(completed->outbox_id, action);
  EXPECT_TRUE(completed->resume.bounced);
  EXPECT_EQ(completed->resume.step, 300);
  ASSERT_FALSE(completed->result.ok());
  EXPECT_EQ(completed->result.error().message,
            "not launched: the best checkpoint that passed the check at alpha is step 300, "
            "below step 400 (step 400 is held at beta)");
}

TEST_F(SiteWorkerTest, ALaunchAtOrAboveItsFloorGoesAhead) {
  const std::string token = "orch-99-2-above";
  enqueue_resuming_launch(token, 300);
  alpha_worker_->run_once();
  EXPECT_THAT(alpha_.launch_calls, ::testing::ElementsAre(token));
  ASSERT_TRUE(posted_launch());
  EXPECT_FALSE(posted_launch()->resume.bounced);
}

TEST_F(SiteWorkerTest, AnAdoptedLaunchIsPostedAsAdoptedWithNoResumeChoice) {
  // The site already runs the token (launched before a crash, perhaps from another checkpoint).
  const std::string token = "orch-99-2-adopted";
  alpha_.runs[token].obs.phase = RunPhase::running;
  alpha_.runs[token].obs.site_job_id = "job-before-crash";
  std::int64_t action = enqueue_resuming_launch(token);
  alpha_worker_->run_once();
  EXPECT_EQ(alpha_.manifest_requests.size(), 1u) << "the resume check runs before the launch";
  EXPECT_THAT(alpha_.launch_calls, ::testing::ElementsAre(token)) << "asked once";
  EXPECT_TRUE(alpha_.found.empty());
  EXPECT_TRUE(alpha_.launched.empty()) << "nothing new was started";
  auto completed = posted_launch();
  ASSERT_TRUE(completed);
  EXPECT_EQ(completed->outbox_id, action);
  EXPECT_TRUE(completed->adopted);
  ASSERT_TRUE(completed->result.ok());
  EXPECT_EQ(completed->result->site_job_id, "job-before-crash");
  EXPECT_FALSE(completed->resume.checkpoint_id) << "no resume choice for an adopted run";
  EXPECT_TRUE(completed->resume.path.empty());
  EXPECT_TRUE(completed->resume.rejected.empty());
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

// A gang's task tags each line "[node/rank] " (issue 41): one tag is stripped before the
// protocol is parsed; a bad protocol line is shown as it was written, tag and all.
TEST(ParseOutputLines, ParsesTheProtocolAfterAGangTasksTag) {
  std::vector<ProgressLine> reports;
  std::vector<std::string> bad;
  parse_output_lines({R"([east-n0/0] @orchestrate {"event":"progress","step":5})",
                      "[east-n0/1] hello", "[east-n0/0] @orchestrate nope",
                      R"([a/0] [b/1] @orchestrate {"event":"progress","step":9})"},
                     reports, bad);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(std::get<ProgressReport>(reports[0]).step, 5);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_THAT(bad[0], ::testing::HasSubstr("in: [east-n0/0] @orchestrate nope"));
}

}  // namespace
}  // namespace orch::testing
