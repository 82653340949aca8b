// The attempts part on its own (with the parts it hands work to): a confirmed launch, progress
// and a clean exit; an exit the restart policy retries; a hung attempt; a site silent past its
// grace; a cancel request.
#include <gmock/gmock.h>

#include "scheduler/brain/attempt_tracker.h"
#include "tests/harness/brain_part_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class AttemptTrackerTest : public BrainPartFixture {
 protected:
  void SetUp() override {
    start({make_cluster("alpha").grace_s(30), make_cluster("beta")});
    health = std::make_unique<HealthJudge>(*core);
    registry = std::make_unique<DataRegistry>(*core);
    transfers = std::make_unique<DataTransfers>(*core, *registry);
    verifier = std::make_unique<DataVerifier>(*core, *registry, *transfers);
    staging = std::make_unique<DataStager>(*core, *registry, *transfers);
    reconciler = std::make_unique<Reconciler>(*core);
    spares = std::make_unique<SparePool>(*core, *health);
    placer =
        std::make_unique<Placer>(*core, PlacementPipeline::standard(), *staging, *health, *spares);
    tracker = std::make_unique<AttemptTracker>(*core, *health, *registry, *verifier, *placer,
                                               *reconciler);
    in_transaction([&] { return placer->load_queue(); });
    job_row = add_job(make_job().nodes(1).gpus(4).on({"alpha"}).hang_after_s(60).infra_restarts(3),
                      JobState::running);
    a = add_attempt(job_row, "alpha", 1, {"alpha-n0"});
  }

  template <typename Event>
  void handle(const Event& e) {
    in_transaction([&] { return tracker->on(e); });
  }

  AttemptObserved seen(RunPhase phase, std::vector<ProgressLine> lines = {}) {
    return AttemptObserved{"alpha", a.token, phase, std::nullopt, {}, std::move(lines), {}};
  }

  std::unique_ptr<HealthJudge> health;
  std::unique_ptr<DataRegistry> registry;
  std::unique_ptr<DataTransfers> transfers;
  std::unique_ptr<DataVerifier> verifier;
  std::unique_ptr<DataStager> staging;
  std::unique_ptr<SparePool> spares;
  std::unique_ptr<Reconciler> reconciler;
  std::unique_ptr<Placer> placer;
  std::unique_ptr<AttemptTracker> tracker;
  JobRow job_row;
  AttemptRow a;
};

TEST_F(AttemptTrackerTest, ProgressIsRecordedAndACleanExitSucceedsTheJob) {
  handle(seen(RunPhase::running, {ProgressReport{1, 1000, 0.5, std::nullopt},
                                  ProgressReport{2, 1000, 0.5, std::nullopt}}));
  EXPECT_EQ(attempt(a).last_step, 2);
  AttemptObserved exit = seen(RunPhase::exited);
  exit.exit = ExitStatus{0, std::nullopt, ""};
  handle(exit);
  EXPECT_EQ(attempt(a).state, AttemptState::exited);
  EXPECT_EQ(attempt(a).cause, ExitCause::succeeded);
  EXPECT_EQ(job(job_row.id).state, JobState::succeeded);
}

TEST_F(AttemptTrackerTest, AnAttemptThatVanishesIsLostAndTheJobResumes) {
  handle(seen(RunPhase::unknown));
  EXPECT_EQ(attempt(a).cause, ExitCause::lost);
  EXPECT_NE(job(job_row.id).state, JobState::failed);
  EXPECT_NE(job(job_row.id).state, JobState::resuming) << "the first infra failure waits nothing";
  EXPECT_EQ(job(job_row.id).infra_restarts, 1);
  EXPECT_THAT(events_of_kind(job_row.id, "resuming").at(0).message,
              HasSubstr("from the start (no checkpoint has a good copy yet)"));
}

TEST_F(AttemptTrackerTest, ASilentAttemptPastItsHangAfterIsEndedAndStopped) {
  handle(seen(RunPhase::running, {ProgressReport{10, 1000, 0.5, std::nullopt}}));
  clock.advance_ms(59'000);
  in_transaction([&] { return tracker->detect_hangs(); });
  EXPECT_EQ(attempt(a).state, AttemptState::running);
  clock.advance_ms(2'000);
  in_transaction([&] { return tracker->detect_hangs(); });
  EXPECT_EQ(attempt(a).cause, ExitCause::hang);
  EXPECT_TRUE(attempt(a).cancel_requested);
  EXPECT_EQ(outbox("alpha", ActionKind::cancel).size(), 1u);
}

TEST_F(AttemptTrackerTest, ASiteSilentPastItsGraceEndsItsAttempts) {
  handle(SiteUnreachable{"alpha", "ssh: connection timed out"});
  EXPECT_EQ(store->cluster("alpha").value()->health, SiteHealth::unreachable);
  EXPECT_EQ(events_of_kind(job_row.id, "site-unreachable").size(), 1u);
  clock.advance_ms(30'000);
  in_transaction([&] { return tracker->expire_unreachable_sites(); });
  EXPECT_EQ(store->cluster("alpha").value()->health, SiteHealth::down);
  EXPECT_EQ(attempt(a).cause, ExitCause::site_down);
}

TEST_F(AttemptTrackerTest, CancellingAsksEveryLiveAttemptToStopAndAnEndedJobIsAConflict) {
  handle(CancelJob{job_row.id});
  EXPECT_EQ(job(job_row.id).state, JobState::cancelled);
  EXPECT_TRUE(attempt(a).cancel_requested);
  auto again = tracker->on(CancelJob{job_row.id});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::conflict);
  auto missing = tracker->on(CancelJob{999});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);
}

}  // namespace
}  // namespace orch::testing
