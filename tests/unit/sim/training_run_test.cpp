// A simulated training attempt (issue 19): steps and saves take their time, a failure keeps the
// newest completed save and nothing after it, and over many failures the world loses what the
// first-order theory says a checkpointing job loses.
#include <gmock/gmock.h>

#include <cmath>

#include "scheduler/health/goodput.h"
#include "simulator/world/sim_random.h"
#include "simulator/world/training_run.h"

namespace orch::sim {
namespace {

TrainingShape shape(double step_s, std::int64_t total, std::int64_t every, double save_s) {
  return {.step_s = step_s, .total_steps = total, .checkpoint_every = every, .save_s = save_s};
}

TEST(TrainingRun, AnUninterruptedRunTakesItsStepsAndItsSaves) {
  // 1,000 steps of 2 s, a 30 s save after steps 100, 200, ... 900 (not at the end).
  const TrainingProgress p = advance(shape(2, 1000, 100, 30), 0, 50);
  EXPECT_TRUE(p.completed);
  EXPECT_EQ(p.step, 1000);
  EXPECT_EQ(p.saves, 9);
  EXPECT_EQ(p.last_checkpoint, 900);
  EXPECT_DOUBLE_EQ(p.at_s, 50 + 2000 + 9 * 30);
}

TEST(TrainingRun, AFailureKeepsTheNewestCompletedSaveAndTheStepsMadeSince) {
  const TrainingShape s = shape(2, 1000, 100, 30);
  // Step 100 at 200 s, its save ends at 230 s, step 150 at 330 s.
  TrainingProgress p = advance(s, 0, 0, 331);
  EXPECT_FALSE(p.completed);
  EXPECT_EQ(p.step, 150);
  EXPECT_EQ(p.last_checkpoint, 100);
  EXPECT_EQ(p.saves, 1);
  // A failure during the second save (step 200 at 430 s, the save until 460 s): it is lost.
  p = advance(s, 0, 0, 445);
  EXPECT_EQ(p.step, 200);
  EXPECT_EQ(p.last_checkpoint, 100);
}

TEST(TrainingRun, AResumedRunKeepsTheJobsOwnSaveStepsAndAJobWithoutSavesKeepsNothing) {
  // From step 150: the next save is after step 200, 100 s later.
  const TrainingProgress resumed = advance(shape(2, 1000, 100, 30), 150, 1000, 1131);
  EXPECT_EQ(resumed.last_checkpoint, 200);
  EXPECT_EQ(resumed.saves, 1);
  const TrainingProgress never = advance(shape(2, 1000, 0, 30), 0, 0, 1500);
  EXPECT_EQ(never.step, 750);
  EXPECT_EQ(never.last_checkpoint, 0);
  EXPECT_EQ(never.saves, 0);
}

TEST(TrainingRun, AGangStepsAtItsClustersMfuAndWaitsForItsSlowestNode) {
  // 7e9 parameters x 6 FLOPs x 4M tokens per step on 256 GPUs of 989 TFLOP/s at 40% MFU.
  const double flops = 6 * 7e9 * 4'194'304;
  const double nominal = gang_step_s(flops, 256, 989e12, 0.40).value();
  EXPECT_NEAR(nominal, flops / (256 * 989e12 * 0.40), 1e-9);
  EXPECT_NEAR(nominal, 1.74, 0.01);
  EXPECT_DOUBLE_EQ(gang_step_s(flops, 256, 989e12, 0.40, 0.5).value(), 2 * nominal);
  EXPECT_DOUBLE_EQ(gang_step_s(flops, 256, 989e12, 0.20).value(), 2 * nominal);
  EXPECT_THAT(gang_step_s(flops, 256, 989e12, 1.2).error().message, ::testing::HasSubstr("MFU"));
  EXPECT_THAT(gang_step_s(flops, 0, 989e12, 0.4).error().message, ::testing::HasSubstr("GPU"));
  EXPECT_THAT(gang_step_s(flops, 8, 989e12, 0.4, 0).error().message, ::testing::HasSubstr("speed"));
  EXPECT_FALSE(gang_step_s(0, 8, 989e12, 0.4).ok());
  EXPECT_FALSE(gang_step_s(flops, 8, std::nan(""), 0.4).ok());
}

TEST(TrainingRun, ShapesThatCannotBeTrainedWithAreRefusedSayingWhy) {
  EXPECT_THAT(shape(0, 10, 1, 0).check().error().message, ::testing::HasSubstr("step"));
  EXPECT_THAT(shape(1, 0, 1, 0).check().error().message, ::testing::HasSubstr("one step"));
  EXPECT_THAT(shape(1, 10, -1, 0).check().error().message,
              ::testing::HasSubstr("checkpoint_every"));
  EXPECT_THAT(shape(1, 10, 1, std::nan("")).check().error().message, ::testing::HasSubstr("save"));
  EXPECT_TRUE(shape(1, 10, 0, 0).check().ok());
}

// A gang job under exponential failures (mean M), a save costing C every tau seconds of
// training, R seconds to restart after each failure: the effective training time ratio the
// world gives over thousands of failures, against 1 - C/tau - (tau/2 + R)/M at Young's interval.
TEST(TrainingRun, UnderExponentialFailuresTheWorldLosesWhatTheFirstOrderTheorySays) {
  constexpr double kM = 8 * 3600.0;
  constexpr double kC = 60;
  constexpr double kR = 600;
  constexpr double kStep = 1;
  const double tau = young_interval_s(kC, kM);  // about 1,859 s
  const auto every = static_cast<std::int64_t>(std::llround(tau / kStep));
  const TrainingShape s = shape(kStep, static_cast<std::int64_t>(4000 * kM), every, kC);
  SimRandom failures(2024, 0);
  double now = 0;
  std::int64_t from = 0;
  int restarts = 0;
  for (;;) {
    const TrainingProgress p = advance(s, from, now, now + failures.exponential(kM));
    if (p.completed) {
      now = p.at_s;
      break;
    }
    now = p.at_s + kR;
    from = p.last_checkpoint;
    ++restarts;
  }
  const double ettr = static_cast<double>(s.total_steps) * kStep / now;
  const double theory = expected_ettr(kC, static_cast<double>(every) * kStep, kR, kM);
  EXPECT_GT(restarts, 3000);
  EXPECT_NEAR(ettr, theory, 0.01) << "simulated " << ettr << ", theory " << theory;
}

}  // namespace
}  // namespace orch::sim
