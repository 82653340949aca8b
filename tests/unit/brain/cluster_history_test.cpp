// Placement's cluster histories: unmeasured clusters are explored (cluster_history.h).
#include "scheduler/brain/cluster_history.h"

#include <gmock/gmock.h>

#include "tests/harness/builders.h"

namespace orch::testing {
namespace {

using ::testing::DoubleNear;
using ::testing::Optional;

std::vector<ClusterSpec> fleet() {
  return {make_cluster("alpha"), make_cluster("beta"), make_cluster("gamma")};
}

TEST(ClusterHistory, BeforeAnyMeasurementEveryClusterKeepsThePrior) {
  ClusterHistories h;
  explore_unmeasured(h, fleet());
  EXPECT_TRUE(h.empty() || !h["alpha"].median_mfu.has_value());
  EXPECT_FALSE(h["beta"].median_mfu.has_value());
}

TEST(ClusterHistory, AnUnmeasuredClusterIsExploredAboveTheBestMeasured) {
  ClusterHistories h;
  h["alpha"].median_mfu = 0.30;
  h["beta"].median_mfu = 0.38;
  explore_unmeasured(h, fleet());
  EXPECT_THAT(h["alpha"].median_mfu, Optional(0.30));  // measured ones are left as they are
  EXPECT_THAT(h["beta"].median_mfu, Optional(0.38));
  EXPECT_THAT(h["gamma"].median_mfu, Optional(DoubleNear(0.38 * kExplorationMfuFactor, 1e-12)));
}

TEST(ClusterHistory, OnceMeasuredAClusterIsJudgedByItsMeasurement) {
  ClusterHistories h;
  h["alpha"].median_mfu = 0.30;
  h["beta"].median_mfu = 0.38;
  h["gamma"].median_mfu = 0.20;  // tried, and worse
  explore_unmeasured(h, fleet());
  EXPECT_THAT(h["gamma"].median_mfu, Optional(0.20));
}

}  // namespace
}  // namespace orch::testing
