// Kueue's Workloads (issue 44) read from the shapes Kueue writes: which Job one belongs to,
// whether Kueue took the Job's quota back (preempted whatever this process saw), and why a
// workload waits.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/kubernetes/kube_workload.h"
#include "tests/unit/kube/fixture.h"

namespace orch::kube {
namespace {

using testing::fixture;
using ::testing::HasSubstr;

constexpr const char* kJobUid = "6f1c7c1e-2a4b-4d0e-9d3a-0b8f3f1d2c11";

TEST(KueueWorkload, APendingWorkloadSaysWhyItWaitsAndIsNotEvicted) {
  auto w = parse_workload(fixture("workload-pending.json"));
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->name, "job-orch-12-3-mx325f71-3c8e1");
  EXPECT_EQ(w->job_uid, kJobUid);
  EXPECT_EQ(w->owner_name, "orch-12-3-mx325f71");
  const WorkloadState state = workload_state(*w);
  EXPECT_FALSE(state.evicted.has_value());
  EXPECT_EQ(state.waiting,
            "Kueue: couldn't assign flavors to pod set main: insufficient unused quota for "
            "nvidia.com/gpu in flavor h100, 8 more needed");
}

TEST(KueueWorkload, AWorkloadEvictedForPreemptionIsAPreemptedAttempt) {
  auto w = parse_workload(fixture("workload-preempted.json"));
  ASSERT_TRUE(w.ok()) << w.error().message;
  const WorkloadState state = workload_state(*w);
  ASSERT_TRUE(state.evicted.has_value());
  EXPECT_EQ(state.evicted->cause, ExitCause::preempted);
  EXPECT_THAT(state.evicted->detail, HasSubstr("job-orch-12-3-mx325f71-3c8e1"));
  EXPECT_THAT(state.evicted->detail,
              HasSubstr("Preempted: Preempted to accommodate a workload (UID: "));
  EXPECT_EQ(state.waiting, "");
}

TEST(KueueWorkload, AnAdmittedWorkloadWithoutTheJobUidLabelIsFoundByItsOwner) {
  auto list = parse_workloads(fixture("workloads-list.json"));
  ASSERT_TRUE(list.ok()) << list.error().message;
  ASSERT_EQ(list->size(), 2u);
  const KueueWorkload* admitted = workload_of_job(*list, "0a9e3d55-1c2b-4f6e-8a7d-3b4c5d6e7f80");
  ASSERT_NE(admitted, nullptr);
  EXPECT_EQ(admitted->name, "job-orch-12-2-kq81b0c2-7a0f4");
  const WorkloadState state = workload_state(*admitted);
  EXPECT_FALSE(state.evicted.has_value());
  EXPECT_EQ(state.waiting, "");
  EXPECT_EQ(workload_of_job(*list, kJobUid), nullptr);
  EXPECT_EQ(workload_of_job(*list, ""), nullptr);
}

TEST(KueueWorkload, ADeactivatedWorkloadIsEvictedWithKueuesReason) {
  auto list = parse_workloads(fixture("workloads-list.json"));
  ASSERT_TRUE(list.ok()) << list.error().message;
  const KueueWorkload* inactive = workload_of_job(*list, "77aa0e12-3b4c-4d5e-9f60-718293a4b5c6");
  ASSERT_NE(inactive, nullptr);
  EXPECT_FALSE(inactive->active);
  const WorkloadState state = workload_state(*inactive);
  ASSERT_TRUE(state.evicted.has_value());
  EXPECT_THAT(state.evicted->detail, HasSubstr("InactiveWorkload: The workload is deactivated"));
}

TEST(KueueWorkload, AWorkloadEvictedForPodsReadyTimeoutIsAGangTimeout) {
  std::string text = fixture("workload-preempted.json");
  const std::string from = "\"reason\": \"Preempted\",\n        \"status\": \"True\"";
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "\"reason\": \"PodsReadyTimeout\",\n        \"status\": \"True\"");
  auto w = parse_workload(text);
  ASSERT_TRUE(w.ok()) << w.error().message;
  const WorkloadState state = workload_state(*w);
  ASSERT_TRUE(state.evicted.has_value());
  EXPECT_EQ(state.evicted->cause, ExitCause::gang_timeout);
}

TEST(KueueWorkload, AMalformedWorkloadNamesTheField) {
  auto w = parse_workload(R"({"metadata": {"name": "job-x-1a2b3"}, "status": {"conditions": 3}})");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().kind, ErrorKind::invalid);
  EXPECT_THAT(w.error().message, HasSubstr("Workload: status.conditions should be an array"));
}

TEST(KueueWorkload, WorkloadsAreListedByTheJobUidLabel) {
  EXPECT_EQ(workloads_path("ml"), "/apis/kueue.x-k8s.io/v1beta1/namespaces/ml/workloads");
  EXPECT_EQ(workload_selector(kJobUid), std::string("kueue.x-k8s.io/job-uid=") + kJobUid);
}

}  // namespace
}  // namespace orch::kube
