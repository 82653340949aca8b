// How many hot spares a job should hold (issue 38): worth it for a large gang that fails often
// and waits long for a node, never for a small one; a spare is counted only while one away could
// still be replacing it.
#include <gmock/gmock.h>

#include "scheduler/health/spares_advice.h"

namespace orch {
namespace {

constexpr double kHour = 3600;

// Llama 3's run: 2,048 nodes of 8 GPUs, node MTBF 6,335 h (a failure every 3.1 h), a relaunch
// that waits 5 minutes for the site's node without a spare, and a used spare replaced in 12
// minutes (granted, burned in).
TEST(SparesAdvice, ALargeGangThatFailsOftenHoldsAFewSpares) {
  const double job_mtbf = 6335 * kHour / 2048;
  const SparesAdvice a = advise_spares(job_mtbf, 16384, 8, 300, 720);
  EXPECT_NEAR(a.failures_per_day, 7.76, 0.01);
  ASSERT_EQ(a.options.size(), 9u);
  EXPECT_EQ(a.options[0].covered, 0);
  EXPECT_NEAR(a.options[1].covered, std::exp(-720 / job_mtbf), 1e-12);
  EXPECT_GT(a.options[2].covered, 0.99);
  EXPECT_DOUBLE_EQ(a.options[3].paid_gpu_h_per_day, 3 * 8 * 24);
  // One spare covers 94% of failures; a second most of the rest; a third costs more than the
  // rare failure it would cover saves.
  EXPECT_EQ(a.recommended, 2);
  EXPECT_GT(a.options[2].net_gpu_h_per_day, a.options[1].net_gpu_h_per_day);
  EXPECT_LT(a.options[3].net_gpu_h_per_day, a.options[2].net_gpu_h_per_day);
}

TEST(SparesAdvice, ASmallJobHoldsNone) {
  const SparesAdvice a = advise_spares(6335 * kHour / 8, 64, 8, 300, 720);
  EXPECT_EQ(a.recommended, 0);
  EXPECT_LT(a.options[1].net_gpu_h_per_day, 0);
}

TEST(SparesAdvice, NothingToSayWithoutAnMtbfOrASaving) {
  EXPECT_TRUE(advise_spares(0, 16384, 8, 300, 720).options.empty());
  EXPECT_TRUE(advise_spares(11000, 16384, 8, 0, 720).options.empty());
  EXPECT_EQ(advise_spares(11000, 16384, 8, -5, 720).recommended, 0);
}

}  // namespace
}  // namespace orch
