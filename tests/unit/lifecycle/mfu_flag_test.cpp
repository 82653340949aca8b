// An implausible MFU (scheduler/lifecycle/mfu.h): which figures count, and the flag's words, which
// name what to fix.
#include "scheduler/lifecycle/mfu.h"

#include <gmock/gmock.h>

#include <cmath>

namespace orch {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

TEST(MfuFlag, OnlyAFiniteMfuFromZeroToOneIsAMeasurement) {
  EXPECT_TRUE(mfu_plausible(0.0));
  EXPECT_TRUE(mfu_plausible(0.38));
  EXPECT_TRUE(mfu_plausible(1.0));
  EXPECT_FALSE(mfu_plausible(1.0001));
  EXPECT_FALSE(mfu_plausible(-0.01));
  EXPECT_FALSE(mfu_plausible(std::nan("")));
  EXPECT_FALSE(mfu_plausible(INFINITY));
}

TEST(MfuFlag, AStepCountsWhenPlausibleAndItsAttemptIsNotFlagged) {
  EXPECT_THAT(counted_mfu(0.38, ""), Optional(0.38));
  EXPECT_EQ(counted_mfu(4.2, ""), std::nullopt);
  EXPECT_EQ(counted_mfu(0.38, "model size or peak FLOPs misconfigured: ..."), std::nullopt);
  EXPECT_EQ(counted_mfu(std::nullopt, ""), std::nullopt);
}

TEST(MfuFlag, TheFlagNamesTheFigureTheModelThePeakAndWhatToCheck) {
  ModelSpec model;
  model.parameters = 7.7722e10;
  EXPECT_EQ(mfu_flag_text(466.33, model, 989e12, 8, "alpha"),
            "model size or peak FLOPs misconfigured: MFU 46633% is above 100% (model.parameters "
            "7.77e+10: 4.66e+11 FLOP per token; peak 989 TFLOP/s per GPU x 8 GPUs on alpha): "
            "check the job's model.parameters (or model.flops_per_token) and tokens per step "
            "(global batch x sequence), and the cluster's accelerator or peak_tflops");
  EXPECT_EQ(mfu_flag_text(0.5, model, 989e12, 8, "alpha"), "");

  ModelSpec direct;
  direct.flops_per_token = 3e12;
  const std::string below = mfu_flag_text(-0.5, direct, std::nullopt, 2, "beta");
  EXPECT_THAT(below, HasSubstr("MFU -50% is below 0 (model.flops_per_token 3e+12; peak unknown "
                               "per GPU x 2 GPUs on beta)"));
}

}  // namespace
}  // namespace orch
