// Progress ingestion: steps, checkpoints, MFU, duplicates after a re-read, bad lines.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

class BrainProgress : public BrainFixture {
 protected:
  void SetUp() override {
    // 1 TFLOP/s per GPU keeps the arithmetic readable.
    start({make_cluster("alpha").peak_tflops(1.0)});
  }
};

TEST_F(BrainProgress, MfuIsModelFlopsOverPeakOfTheGpusUsed) {
  // 2 GPUs x 1 TFLOP/s. 1000 tokens in 0.5 s at 6e8 FLOP/token = 1.2e12 FLOP/s -> 60%.
  JobId id = submit(make_job().gpus(2).flops_per_token(6e8));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 10, 0, 1000, 0.5);

  AttemptRow a = last_attempt(id);
  ASSERT_TRUE(a.mfu.has_value());
  EXPECT_NEAR(*a.mfu, 0.6, 1e-9);
  EXPECT_EQ(a.first_step, 1);
  EXPECT_EQ(a.last_step, 10);
}

TEST_F(BrainProgress, CheckpointsAreRecordedOnceEach) {
  JobId id = submit(make_job());
  site_launches_all("alpha");
  train(last_attempt(id), 1, 30, 10);
  train(last_attempt(id), 1, 30, 10);  // the same output read again after a restart
  auto ckpts = store->checkpoints_of(id).value();
  ASSERT_EQ(ckpts.size(), 3u);
  EXPECT_EQ(ckpts.back().step, 30);
  EXPECT_EQ(ckpts.back().path, "/checkpoints/job-1/step-30");
}

TEST_F(BrainProgress, RereadStepsDoNotCountTwiceTowardsMfu) {
  JobId id = submit(make_job().gpus(2).flops_per_token(6e8));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 10, 0, 1000, 0.5);
  train(last_attempt(id), 1, 10, 0, 4000, 0.5);
  EXPECT_NEAR(*last_attempt(id).mfu, 0.6, 1e-9);
  EXPECT_DOUBLE_EQ(last_attempt(id).tokens_total, 10'000);
}

TEST_F(BrainProgress, WithoutModelSizeThereIsNoMfu) {
  JobSpec spec = make_job();
  spec.model = {};
  JobId id = submit(spec);
  site_launches_all("alpha");
  train(last_attempt(id), 1, 5);
  EXPECT_FALSE(last_attempt(id).mfu.has_value());
  EXPECT_EQ(last_attempt(id).last_step, 5);
}

TEST_F(BrainProgress, BadProtocolLinesBecomeEventsAndNothingElse) {
  JobId id = submit(make_job());
  site_launches_all("alpha");
  AttemptRow a = last_attempt(id);
  handle(AttemptObserved{"alpha",
                         a.token,
                         RunPhase::running,
                         std::nullopt,
                         {},
                         {},
                         {"bad progress line: missing \"step\" in: @orchestrate {}"}});
  EXPECT_THAT(event_kinds(id), ::testing::Contains("bad-progress-line"));
  EXPECT_EQ(job(id).state, JobState::running);
}

TEST_F(BrainProgress, SuccessfulJobRecordsEttr) {
  JobId id = submit(make_job());
  site_launches_all("alpha");
  train(last_attempt(id), 1, 20, 10, 1000, 0.5);  // 10 s of steps
  clock.advance_ms(20'000);
  exits(last_attempt(id), 0);
  EXPECT_EQ(job(id).state, JobState::succeeded);
  auto events = store->events_of(id).value();
  EXPECT_THAT(events.back().message, ::testing::HasSubstr("ETTR 0.500"));
}

}  // namespace
}  // namespace orch::testing
