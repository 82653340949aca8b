// The fake's Kueue (issue 44): each queued Job's Workload as Kueue writes it, waiting, admitted,
// running, finished, and evicted by the preemption hook then admitted again.

#include <gmock/gmock.h>

#include "tests/integration/fake_kube/fake_kube_fixture.h"

namespace orch::fake_kube::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class KueueTest : public FakeKubeTest {
 protected:
  void SetUp() override {
    FakeKubeTest::SetUp();
    start_server();
  }

  // A Job of `queue` asking for 4 GPUs, created suspended as Kueue's clients do.
  json queued_job(const std::string& name, const std::string& script) {
    json j = job(name, script);
    j["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "team-a";
    j["spec"]["suspend"] = true;
    j["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        {"limits", {{"nvidia.com/gpu", "4"}}}};
    return create_job(j);
  }

  // The Job's Workload once `pred` holds for it, found by the job-uid label.
  json workload(const json& job, const std::function<bool(const json&)>& pred) {
    const std::string uid = job["metadata"]["uid"];
    const json list = wait_for(
        "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads?labelSelector="
        "kueue.x-k8s.io%2Fjob-uid%3D" +
            uid,
        [&](const json& l) { return l["items"].size() == 1 && pred(l["items"][0]); });
    return list["items"].empty() ? json::object() : list["items"][0];
  }

  static json condition(const json& workload, const std::string& type) {
    for (const json& c : workload["status"]["conditions"]) {
      if (c["type"] == type) return c;
    }
    return json::object();
  }
  static std::function<bool(const json&)> has(const std::string& type, const std::string& status) {
    return [=](const json& w) { return condition(w, type).value("status", "") == status; };
  }
};

TEST_F(KueueTest, AQueuedJobsWorkloadWaitsRunsAndFinishesAsKueueWritesIt) {
  const json created = queued_job("trainer", "sleep 1");
  json w = workload(created, has("QuotaReserved", "False"));
  EXPECT_THAT(w["metadata"]["name"].get<std::string>(), StartsWith("job-trainer-"));
  EXPECT_EQ(w["metadata"]["name"].get<std::string>().size(),
            std::string("job-trainer-").size() + 5);
  EXPECT_EQ(w["metadata"]["ownerReferences"][0]["kind"], "Job");
  EXPECT_EQ(w["metadata"]["ownerReferences"][0]["uid"], created["metadata"]["uid"]);
  EXPECT_EQ(w["spec"]["queueName"], "team-a");
  EXPECT_EQ(condition(w, "QuotaReserved")["reason"], "Inadmissible");
  EXPECT_EQ(condition(w, "QuotaReserved")["message"], "LocalQueue team-a doesn't exist");

  ASSERT_EQ(call("POST", "/fake/queues/team-a?gpus=2").status, 200);
  w = workload(created, [](const json& x) {
    return condition(x, "QuotaReserved").value("reason", "") == "Pending";
  });
  EXPECT_EQ(condition(w, "QuotaReserved")["message"],
            "couldn't assign flavors to pod set main: insufficient unused quota for "
            "nvidia.com/gpu in flavor default-flavor, 2 more needed");

  ASSERT_EQ(call("POST", "/fake/queues/team-a?gpus=8").status, 200);
  w = workload(created, has("Admitted", "True"));
  EXPECT_EQ(condition(w, "QuotaReserved")["status"], "True");
  w = workload(created, has("Finished", "True"));
  EXPECT_EQ(condition(w, "Finished")["reason"], "Succeeded");
  EXPECT_EQ(condition(w, "Finished")["message"], "Job finished successfully");
}

TEST_F(KueueTest, TheSuspendHookEvictsTheWorkloadAndKueueAdmitsItAgainLater) {
  ASSERT_EQ(call("POST", "/fake/queues/team-a?gpus=8").status, 200);
  const json created = queued_job("victim", "sleep 60");
  wait_pod_phase("victim", "Running");
  workload(created, has("PodsReady", "True"));
  ASSERT_EQ(call("POST", "/fake/queues/team-a?gpus=0").status, 200);
  ASSERT_EQ(call("POST", "/fake/namespaces/default/jobs/victim/suspend").status, 200);
  json w = workload(created, has("Evicted", "True"));
  EXPECT_EQ(condition(w, "Evicted")["reason"], "Preempted");
  EXPECT_THAT(condition(w, "Evicted")["message"].get<std::string>(),
              HasSubstr("Preempted to accommodate a workload (UID: "));
  EXPECT_EQ(condition(w, "Preempted")["reason"], "InClusterQueue");
  EXPECT_EQ(condition(w, "QuotaReserved")["status"], "False");
  EXPECT_EQ(condition(w, "Admitted")["reason"], "NoReservation");
  EXPECT_EQ(get("/apis/batch/v1/namespaces/default/jobs/victim")["spec"]["suspend"], true);

  ASSERT_EQ(call("POST", "/fake/queues/team-a?gpus=8").status, 200);
  w = workload(created, has("Evicted", "False"));
  EXPECT_THAT(condition(w, "Evicted")["message"].get<std::string>(), StartsWith("Previously: "));
  EXPECT_EQ(condition(w, "Admitted")["status"], "True");
}

TEST_F(KueueTest, AWorkloadGoesWithItsJob) {
  const json created = queued_job("short-lived", "true");
  workload(created, has("QuotaReserved", "False"));
  ASSERT_EQ(call("DELETE",
                 "/apis/batch/v1/namespaces/default/jobs/short-lived?"
                 "propagationPolicy=Background")
                .status,
            200);
  wait_for("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads",
           [](const json& l) { return l["items"].empty(); });
}

}  // namespace
}  // namespace orch::fake_kube::testing
