// The test hooks and the cluster behaviour behind them: node lost, eviction, killed and
// OOM-killed containers, image and config errors, scheduling, indexed jobs, graceful deletion.

#include <gmock/gmock.h>

#include "tests/integration/fake_kube/fake_kube_fixture.h"

namespace orch::fake_kube::testing {
namespace {

using ::testing::HasSubstr;

class HooksTest : public FakeKubeTest {
 protected:
  void SetUp() override {
    FakeKubeTest::SetUp();
    start_server();
  }

  std::string pod_path(const json& pod) {
    return "/api/v1/namespaces/" + pod["metadata"]["namespace"].get<std::string>() + "/pods/" +
           pod["metadata"]["name"].get<std::string>();
  }
  pid_t pid_of(const json& pod) {
    return get("/fake/namespaces/default/pods/" +
               pod["metadata"]["name"].get<std::string>())["pid"];
  }
  json wait_pod(const json& pod, const std::function<bool(const json&)>& pred) {
    return wait_for(pod_path(pod), pred);
  }
  static bool failed(const json& p) { return p["status"].value("phase", "") == "Failed"; }
  static std::string condition(const json& o, const std::string& type) {
    for (const json& c : o.value("status", json::object()).value("conditions", json::array())) {
      if (c["type"] == type) return c["status"];
    }
    return "";
  }
};

TEST_F(HooksTest, ALostNodeKillsItsPodsAndFailsThem) {
  create_job(job("long", "echo started; sleep 60"));
  json pod = wait_pod_phase("long", "Running");
  const std::string node = pod["spec"]["nodeName"];
  const pid_t pid = pid_of(pod);
  ASSERT_TRUE(process_alive(pid));

  const KubeReply r = call("POST", "/fake/nodes/" + node + "/notready");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(process_alive(pid)) << "the pod's process survived its node";
  json lost = get(pod_path(pod));
  EXPECT_EQ(lost["status"]["phase"], "Failed");
  EXPECT_EQ(lost["status"]["reason"], "NodeLost");
  EXPECT_THAT(lost["status"]["message"].get<std::string>(),
              HasSubstr("Node " + node + " which was running pod"));
  EXPECT_EQ(condition(lost, "DisruptionTarget"), "True");

  json n = get("/api/v1/nodes/" + node);
  EXPECT_EQ(condition(n, "Ready"), "Unknown");
  bool unreachable = false;
  for (const json& t : n["spec"]["taints"]) {
    unreachable |= t["key"] == "node.kubernetes.io/unreachable";
  }
  EXPECT_TRUE(unreachable);

  json failed_job = wait_for("/apis/batch/v1/namespaces/default/jobs/long",
                             [](const json& j) { return j["status"].contains("conditions"); });
  EXPECT_EQ(last_condition(failed_job)["reason"], "BackoffLimitExceeded");

  // Nothing new goes to the lost node; once Ready again it takes pods.
  json again = job("next", "sleep 60");
  again["spec"]["template"]["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", node}};
  create_job(again);
  json pending = wait_for(
      "/api/v1/namespaces/default/pods?labelSelector=job-name%3Dnext",
      [](const json& l) { return first_item_condition(l).value("reason", "") == "Unschedulable"; });
  EXPECT_THAT(first_item_condition(pending).value("message", ""),
              HasSubstr("0/2 nodes are available"));
  ASSERT_EQ(call("POST", "/fake/nodes/" + node + "/ready").status, 200);
  EXPECT_EQ(condition(get("/api/v1/nodes/" + node), "Ready"), "True");
  wait_pod_phase("next", "Running");
}

TEST_F(HooksTest, NotReadyWithKeepPodsLeavesProcessesRunning) {
  create_job(job("keep", "sleep 60"));
  json pod = wait_pod_phase("keep", "Running");
  const pid_t pid = pid_of(pod);
  ASSERT_EQ(call("POST", "/fake/nodes/" + pod["spec"]["nodeName"].get<std::string>() +
                             "/notready?keepPods=true")
                .status,
            200);
  EXPECT_EQ(condition(get("/api/v1/nodes/" + pod["spec"]["nodeName"].get<std::string>()), "Ready"),
            "False");
  EXPECT_TRUE(process_alive(pid));
  EXPECT_EQ(get(pod_path(pod))["status"]["phase"], "Running");
}

// A node that dies without a word (issue 44): its processes are gone at once while the API
// still says the pod runs and the node is Ready, for as long as nobody notices.
TEST_F(HooksTest, AFrozenNodeKillsItsProcessesWhileTheApiStillSaysRunning) {
  create_job(job("frozen", "echo started; sleep 60"));
  json pod = wait_pod_phase("frozen", "Running");
  const std::string node = pod["spec"]["nodeName"];
  const pid_t pid = pid_of(pod);
  ASSERT_TRUE(process_alive(pid));

  ASSERT_EQ(call("POST", "/fake/nodes/" + node + "/freeze").status, 200);
  EXPECT_FALSE(process_alive(pid)) << "the pod's process survived its node";
  std::this_thread::sleep_for(300ms);  // several passes of the control loop
  EXPECT_EQ(get(pod_path(pod))["status"]["phase"], "Running");
  EXPECT_EQ(condition(get(pod_path(pod)), "Ready"), "True");
  EXPECT_EQ(condition(get("/api/v1/nodes/" + node), "Ready"), "True");
  EXPECT_EQ(get("/apis/batch/v1/namespaces/default/jobs/frozen")["status"].value("active", 0), 1);
  EXPECT_EQ(get("/fake/namespaces/default/pods/" + pod["metadata"]["name"].get<std::string>())
                ["running"],
            false);
  // Its kubelet does not answer: exec fails as the API server's dial to it does.
  const KubeReply exec = call("GET", pod_path(pod) + "/exec?command=true&stdout=true");
  EXPECT_EQ(exec.status, 500) << exec.body;
  EXPECT_THAT(exec.body, HasSubstr("error dialing backend"));

  // Deleting the Job removes the pod at once (no kubelet to wait for).
  ASSERT_EQ(call("DELETE", "/apis/batch/v1/namespaces/default/jobs/frozen",
                 R"({"propagationPolicy":"Background"})")
                .status,
            200);
  wait_for("/api/v1/namespaces/default/pods?labelSelector=job-name%3Dfrozen",
           [](const json& l) { return l["items"].empty(); });
  EXPECT_EQ(call("POST", "/fake/nodes/nope/freeze").status, 404);
}

TEST_F(HooksTest, EvictionFailsThePodWithReasonEvicted) {
  create_job(job("evictme", "sleep 60"));
  json pod = wait_pod_phase("evictme", "Running");
  ASSERT_EQ(
      call("POST", "/fake/namespaces/default/pods/" + pod["metadata"]["name"].get<std::string>() +
                       "/evict?message=The+node+was+low+on+resource%3A+memory.")
          .status,
      200);
  json evicted = wait_pod(pod, failed);
  EXPECT_EQ(evicted["status"]["reason"], "Evicted");
  EXPECT_EQ(evicted["status"]["message"], "The node was low on resource: memory.");
  EXPECT_EQ(condition(evicted, "DisruptionTarget"), "True");
  EXPECT_EQ(evicted["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 137);
}

TEST_F(HooksTest, KilledContainersReportTheSignalAndOomKilled) {
  create_job(job("oom", "sleep 60"));
  create_job(job("term", "sleep 60"));
  json oom = wait_pod_phase("oom", "Running");
  json term = wait_pod_phase("term", "Running");
  ASSERT_EQ(
      call("POST", "/fake/namespaces/default/pods/" + oom["metadata"]["name"].get<std::string>() +
                       "/kill?signal=KILL&reason=OOMKilled")
          .status,
      200);
  ASSERT_EQ(call("POST", "/fake/namespaces/default/pods/" +
                             term["metadata"]["name"].get<std::string>() + "/kill?signal=TERM")
                .status,
            200);
  json a = wait_pod(oom, failed)["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(a["reason"], "OOMKilled");
  EXPECT_EQ(a["exitCode"], 137);
  json b = wait_pod(term, failed)["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(b["reason"], "Error");
  EXPECT_EQ(b["exitCode"], 143);
}

TEST_F(HooksTest, ImageAndConfigErrorsWaitWithKubernetesMessages) {
  create_job(job("pull", "true", "fake/pull-error"));
  create_job(job("config", "true", "fake/config-error"));
  const auto waiting = [&](const std::string& name, const std::string& reason) {
    json state;
    wait_for("/api/v1/namespaces/default/pods?labelSelector=job-name%3D" + name,
             [&](const json& l) {
               if (l["items"].empty()) return false;
               const json& cs = l["items"][0]["status"].value("containerStatuses", json::array());
               if (cs.empty()) return false;
               state = cs[0]["state"];
               return state.contains("waiting") && state["waiting"]["reason"] == reason;
             });
    return state["waiting"];
  };
  json pull = waiting("pull", "ImagePullBackOff");
  EXPECT_EQ(pull["message"], "Back-off pulling image \"fake/pull-error\"");
  EXPECT_EQ(waiting("config", "CreateContainerConfigError")["message"],
            "configmap \"fake-config\" not found");
  json pod = job_pods("pull")[0];
  EXPECT_EQ(pod["status"]["phase"], "Pending");
  const KubeReply log = call("GET", pod_path(pod) + "/log");
  EXPECT_EQ(log.status, 400);
  EXPECT_THAT(log.json()["message"].get<std::string>(), HasSubstr("is waiting to start"));
}

TEST_F(HooksTest, SchedulingHonoursGpusAffinityAndTaints) {
  json big = job("big", "sleep 60");
  big["spec"]["template"]["spec"]["containers"][0]["resources"] = {
      {"limits", {{"nvidia.com/gpu", 16}}}};
  create_job(big);
  json pending = wait_for("/api/v1/namespaces/default/pods?labelSelector=job-name%3Dbig",
                          [](const json& l) { return !first_item_condition(l).empty(); });
  json cond = first_item_condition(pending);
  EXPECT_EQ(cond["type"], "PodScheduled");
  EXPECT_EQ(cond["status"], "False");
  EXPECT_EQ(cond["reason"], "Unschedulable");
  EXPECT_THAT(cond["message"].get<std::string>(),
              HasSubstr("0/2 nodes are available: 2 Insufficient nvidia.com/gpu"));

  json avoid = job("avoid", "sleep 60");
  avoid["spec"]["template"]["spec"]["containers"][0]["resources"] = {
      {"limits", {{"nvidia.com/gpu", 8}}}};
  avoid["spec"]["template"]["spec"]["affinity"] = {
      {"nodeAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         {{"nodeSelectorTerms",
           json::array({{{"matchExpressions", json::array({{{"key", "kubernetes.io/hostname"},
                                                            {"operator", "NotIn"},
                                                            {"values", {"node-1"}}}})}}})}}}}}};
  create_job(avoid);
  EXPECT_EQ(wait_pod_phase("avoid", "Running")["spec"]["nodeName"], "node-0");

  // node-0's GPUs are taken: another 8-GPU pod goes to node-1 ...
  json second = job("second", "sleep 60");
  second["spec"]["template"]["spec"]["containers"][0]["resources"] = {
      {"limits", {{"nvidia.com/gpu", 8}}}};
  create_job(second);
  EXPECT_EQ(wait_pod_phase("second", "Running")["spec"]["nodeName"], "node-1");
  // ... and a third fits nowhere.
  json third = second;
  third["metadata"]["name"] = "third";
  create_job(third);
  json full = wait_for("/api/v1/namespaces/default/pods?labelSelector=job-name%3Dthird",
                       [](const json& l) { return !first_item_condition(l).empty(); });
  EXPECT_THAT(first_item_condition(full).value("message", ""),
              HasSubstr("Insufficient nvidia.com/gpu"));
}

TEST_F(HooksTest, IndexedJobsGetOnePodPerIndexWithItsHostnameAndIndex) {
  json indexed = job("ranks", "echo rank=$JOB_COMPLETION_INDEX host=$HOSTNAME");
  indexed["spec"]["completionMode"] = "Indexed";
  indexed["spec"]["completions"] = 2;
  indexed["spec"]["parallelism"] = 2;
  indexed["spec"]["template"]["spec"]["subdomain"] = "ranks";
  create_job(indexed);
  json done = wait_for("/apis/batch/v1/namespaces/default/jobs/ranks",
                       [](const json& j) { return j["status"].value("succeeded", 0) == 2; });
  EXPECT_EQ(done["status"]["completedIndexes"], "0-1");
  std::set<std::string> logs;
  for (const json& p : job_pods("ranks")) {
    const std::string index =
        p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"];
    EXPECT_EQ(p["spec"]["hostname"], "ranks-" + index);
    EXPECT_EQ(p["spec"]["subdomain"], "ranks");
    EXPECT_THAT(p["metadata"]["name"].get<std::string>(),
                ::testing::StartsWith("ranks-" + index + "-"));
    logs.insert(call("GET", pod_path(p) + "/log").body);
  }
  EXPECT_EQ(logs, (std::set<std::string>{"rank=0 host=ranks-0\n", "rank=1 host=ranks-1\n"}));
}

TEST_F(HooksTest, DeletingAJobTerminatesItsPodsGracefully) {
  create_job(job("graceful",
                 "trap 'echo got TERM; exit 0' TERM; echo up; while true; do sleep 0.1; done"));
  json pod = wait_pod_phase("graceful", "Running");
  const pid_t pid = pid_of(pod);
  // Wait for the trap to be set (the script prints "up" after it).
  const std::string log_path =
      get("/fake/namespaces/default/pods/" + pod["metadata"]["name"].get<std::string>())["log"];
  for (int i = 0; i < 100 && e2e::read_file(log_path).find("up") == std::string::npos; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  const KubeReply del = call("DELETE", "/apis/batch/v1/namespaces/default/jobs/graceful",
                             R"({"propagationPolicy":"Background"})");
  ASSERT_EQ(del.status, 200) << del.body;
  EXPECT_EQ(del.json()["status"], "Success");
  wait_for("/api/v1/namespaces/default/pods?labelSelector=job-name%3Dgraceful",
           [](const json& l) { return l["items"].empty(); });
  EXPECT_FALSE(process_alive(pid));
  EXPECT_THAT(e2e::read_file(log_path), HasSubstr("got TERM"));
}

TEST_F(HooksTest, ActiveDeadlineSecondsFailsTheJobAndStopsItsPods) {
  json slow = job("slow", "sleep 60");
  slow["spec"]["activeDeadlineSeconds"] = 1;
  create_job(slow);
  json pod = wait_pod_phase("slow", "Running");
  const pid_t pid = pid_of(pod);
  json failed_job = wait_for("/apis/batch/v1/namespaces/default/jobs/slow",
                             [](const json& j) { return j["status"].contains("conditions"); });
  EXPECT_EQ(last_condition(failed_job)["type"], "Failed");
  EXPECT_EQ(last_condition(failed_job)["reason"], "DeadlineExceeded");
  wait_for("/api/v1/namespaces/default/pods?labelSelector=job-name%3Dslow",
           [](const json& l) { return l["items"].empty(); });
  EXPECT_FALSE(process_alive(pid));
}

TEST_F(HooksTest, UnknownHooksAndPodsAreReported) {
  EXPECT_EQ(call("POST", "/fake/nodes/nope/notready").status, 404);
  EXPECT_EQ(call("POST", "/fake/namespaces/default/pods/nope/kill").status, 404);
  EXPECT_EQ(call("POST", "/fake/whatever").status, 400);
  ASSERT_EQ(call("POST", "/fake/nodes", R"({"name":"node-2","gpus":4})").status, 200);
  EXPECT_EQ(get("/api/v1/nodes/node-2")["status"]["allocatable"]["nvidia.com/gpu"], "4");
}

}  // namespace
}  // namespace orch::fake_kube::testing
