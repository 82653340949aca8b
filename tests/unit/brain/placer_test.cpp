// The placing part on its own: a submitted job is checked, stored and placed where it fits (an
// attempt, a launch in that site's outbox); one that fits nowhere waits with the reason, said
// once; a job waiting for its backoff is not placed before it passes.
#include <gmock/gmock.h>

#include "scheduler/brain/placer.h"
#include "tests/harness/brain_part_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class PlacerTest : public BrainPartFixture {
 protected:
  void SetUp() override {
    start({make_cluster("alpha").nodes(2).gpus_per_node(4), make_cluster("beta").nodes(1)});
    health = std::make_unique<HealthJudge>(*core);
    registry = std::make_unique<DataRegistry>(*core);
    transfers = std::make_unique<DataTransfers>(*core, *registry);
    staging = std::make_unique<DataStager>(*core, *registry, *transfers);
    spares = std::make_unique<SparePool>(*core, *health);
    placer =
        std::make_unique<Placer>(*core, PlacementPipeline::standard(), *staging, *health, *spares);
    in_transaction([&] { return placer->load_queue(); });
  }

  // queue_anyway: kept even when no configured cluster could hold it (issue 42).
  JobId submit(const JobSpec& spec, bool queue_anyway = false) {
    JobId id = 0;
    Submitter who;
    who.queue_anyway = queue_anyway;
    placer->begin_event();
    in_transaction([&]() -> Result<void> {
      auto r = placer->on(SubmitJob{spec, who});
      if (!r) return r.error();
      id = r->job_id;
      return Ok{};
    });
    placer->after_commit(true);
    return id;
  }

  void round() {
    placer->begin_event();
    in_transaction([&] { return placer->place_waiting_jobs(); });
    placer->after_commit(true);
  }

  std::unique_ptr<HealthJudge> health;
  std::unique_ptr<DataRegistry> registry;
  std::unique_ptr<DataTransfers> transfers;
  std::unique_ptr<DataStager> staging;
  std::unique_ptr<SparePool> spares;
  std::unique_ptr<Placer> placer;
};

TEST_F(PlacerTest, AJobThatFitsIsPlacedWithOneLaunchInItsSitesOutbox) {
  JobId id = submit(make_job().nodes(2).gpus(4));
  EXPECT_EQ(job(id).state, JobState::placed);
  auto launches = outbox("alpha", ActionKind::launch);
  ASSERT_EQ(launches.size(), 1u);
  auto attempts = store->attempts_of(id).value();
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].cluster, "alpha");
  EXPECT_EQ(launches[0].token, attempts[0].token);
  EXPECT_EQ(events_of_kind(id, "placed").size(), 1u);
}

TEST_F(PlacerTest, AJobNamingAnUnknownClusterIsRefusedWithTheConfiguredOnes) {
  auto r = placer->on(SubmitJob{make_job().on({"gamma"})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_THAT(r.error().message, HasSubstr("configured clusters: alpha, beta"));
}

TEST_F(PlacerTest, AJobThatFitsNowhereWaitsAndSaysWhyOnce) {
  JobId id = submit(make_job().nodes(3).gpus(4), true);
  EXPECT_EQ(job(id).state, JobState::pending);
  EXPECT_THAT(job(id).reason, HasSubstr("waiting for capacity"));
  round();
  round();
  EXPECT_EQ(events_of_kind(id, "unschedulable").size(), 1u);
  EXPECT_TRUE(outbox("alpha", ActionKind::launch).empty());
}

TEST_F(PlacerTest, GpusPlacedEarlierStillCountWhenAnotherKindOfChangeRebuildsTheViews) {
  submit(make_job().nodes(2).gpus(4));  // fills alpha
  // A node reported at beta: the views are read again, the GPUs in use are not.
  in_transaction([&] {
    NodeRow n;
    n.cluster = "beta";
    n.name = "beta-n0";
    n.gpus = 8;
    n.seen_ms = clock.now_ms();
    return store->upsert_node(n);
  });
  JobId second = submit(make_job().nodes(1).gpus(4).on({"alpha"}));
  EXPECT_EQ(job(second).state, JobState::pending);
  EXPECT_THAT(job(second).reason, HasSubstr("alpha: capacity: only 0 of 8 GPUs free"));
}

TEST_F(PlacerTest, AJobIsNotPlacedBeforeItsBackoffPasses) {
  JobId first = submit(make_job().nodes(2).gpus(4));  // fills alpha
  JobRow waiting = add_job(make_job().nodes(1).gpus(4).on({"beta"}), JobState::resuming);
  waiting.next_attempt_ms = clock.now_ms() + 10'000;
  ASSERT_TRUE(store->update_job(waiting, clock.now_ms()).ok());
  in_transaction([&] { return placer->load_queue(); });
  round();
  EXPECT_EQ(job(waiting.id).state, JobState::resuming);
  clock.advance_ms(10'000);
  round();
  EXPECT_EQ(job(waiting.id).state, JobState::placed);
  EXPECT_EQ(store->attempts_of(first).value().size(), 1u);
}

}  // namespace
}  // namespace orch::testing
