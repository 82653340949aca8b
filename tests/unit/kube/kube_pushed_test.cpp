// The records agents push home judged with the API's pods (kube_pushed.h), pure: the cases the
// site tests on the fake API server do not reach (a gang not all running, a task that exited, a
// fault found after the pods ended, the heartbeat annotation read from a pod).
#include "adapters/kubernetes/kube_pushed.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/kubernetes/kube_status.h"

namespace orch::kube {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kNow = 1'800'000'000'000;
constexpr PushClock kClock{kNow, kNow - 60'000};

PodInfo pod(int rank, const std::string& node, const std::string& phase = "Running") {
  PodInfo p;
  p.name = "job-" + std::to_string(rank);
  p.node_name = node;
  p.phase = phase;
  p.completion_index = rank;
  p.gang_size = 2;
  p.heartbeat_timeout_ms = 5000;
  return p;
}

PushedTask pushed(int rank, std::int64_t age_ms, const std::string& event = "heartbeat") {
  PushedTask t;
  t.rank = rank;
  t.received_ms = kNow - age_ms;
  t.at_ms = t.received_ms;
  t.event = event;
  return t;
}

TaskFault xid(int code, std::int64_t at_ms) {
  TaskFault f;
  f.cause = ExitCause::gpu_xid;
  f.xid = code;
  f.detail = "Xid " + std::to_string(code) + " on GPU 0";
  f.at_ms = at_ms;
  return f;
}

TEST(KubePushed, ASilentTaskIsJudgedOnlyWhileEveryPodOfTheGangRuns) {
  const std::vector<PushedTask> tasks = {pushed(0, 100), pushed(1, 9000)};
  EXPECT_TRUE(judge_pushed({pod(0, "a"), pod(1, "b")}, tasks, kClock).exit.has_value());
  // Rank 1's pod ended (the API's to report), or is not there yet: nothing from silence.
  EXPECT_FALSE(judge_pushed({pod(0, "a"), pod(1, "b", "Failed")}, tasks, kClock).exit);
  EXPECT_FALSE(judge_pushed({pod(0, "a")}, tasks, kClock).exit);
  PodInfo deleting = pod(1, "b");
  deleting.deleting = true;
  EXPECT_FALSE(judge_pushed({pod(0, "a"), deleting}, tasks, kClock).exit);
}

TEST(KubePushed, ATaskThatExitedIsNotSilentAndItsExitIsTheApis) {
  PushedTask done = pushed(1, 9000, "exit");
  done.exit_code = 3;
  EXPECT_FALSE(judge_pushed({pod(0, "a"), pod(1, "b")}, {pushed(0, 100), done}, kClock).exit);
}

TEST(KubePushed, PodsWithoutTheHeartbeatAnnotationAreNeverJudgedSilent) {
  PodInfo a = pod(0, "a"), b = pod(1, "b");
  a.heartbeat_timeout_ms.reset();
  b.heartbeat_timeout_ms.reset();
  EXPECT_FALSE(judge_pushed({a, b}, {pushed(0, 100), pushed(1, 600'000)}, kClock).exit);
}

TEST(KubePushed, TheEarliestPushedFaultIsTheEndOfAnAttemptWhosePodsEnded) {
  PushedTask late = pushed(0, 100);
  late.fault = xid(48, kNow - 500);
  PushedTask early = pushed(1, 100);
  early.fault = xid(79, kNow - 900);
  auto exit = pushed_fault({pod(0, "a", "Failed"), pod(1, "b", "Failed")}, {late, early});
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->cause, ExitCause::gpu_xid);
  EXPECT_EQ(exit->failed_node, "b") << "the API's node of the pod, not the agent's name for it";
  EXPECT_EQ(exit->failed_rank, 1);
  EXPECT_THAT(exit->detail, HasSubstr("Xid 79"));
  EXPECT_FALSE(pushed_fault({pod(0, "a", "Failed")}, {pushed(0, 100)}).has_value());
}

TEST(KubePushed, ThePodsHeartbeatTimeoutIsReadFromItsAnnotation) {
  auto p = parse_pod(
      R"({"metadata":{"name":"p","annotations":{"orchestrate.dev/heartbeat-timeout-ms":"10000"}},)"
      R"("status":{"phase":"Running"}})");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->heartbeat_timeout_ms, 10000);
  auto none = parse_pod(
      R"({"metadata":{"name":"p","annotations":{"orchestrate.dev/heartbeat-timeout-ms":"0"}}})");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->heartbeat_timeout_ms.has_value());
}

}  // namespace
}  // namespace orch::kube
