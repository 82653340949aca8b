// A fatal GPU fault the live watch saw (issue 43, ledger kind gpu-fault) puts its node out at
// once, whatever its count (scheduler/health/quarantine.h, after_fatal_fault).
#include <gmock/gmock.h>

#include "scheduler/health/quarantine.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

TEST(FatalFault, OneFaultQuarantinesAnActiveNodeWithTheFaultInTheReason) {
  EXPECT_TRUE(quarantines_at_once("gpu-fault"));
  EXPECT_FALSE(quarantines_at_once("gpu-error")) << "a log line counts like any failure";
  EXPECT_TRUE(is_failure_kind("gpu-fault"));
  NodeDecision d = after_fatal_fault(NodeHealth{}, "Xid 79 on GPU 3", QuarantinePolicy{});
  ASSERT_TRUE(d.to.has_value());
  EXPECT_EQ(*d.to, NodeState::quarantined);
  EXPECT_THAT(d.reason, HasSubstr("fatal GPU fault: Xid 79 on GPU 3"));
}

TEST(FatalFault, TheRetireAfterThQuarantineRetiresAndANodeAlreadyOutStaysAsItIs) {
  NodeHealth twice;
  twice.quarantines = 2;
  EXPECT_EQ(after_fatal_fault(twice, "x", QuarantinePolicy{}).to, NodeState::retired);
  NodeHealth out;
  out.state = NodeState::quarantined;
  EXPECT_FALSE(after_fatal_fault(out, "x", QuarantinePolicy{}).to.has_value());
  out.state = NodeState::retired;
  EXPECT_FALSE(after_fatal_fault(out, "x", QuarantinePolicy{}).to.has_value());
}

}  // namespace
}  // namespace orch
