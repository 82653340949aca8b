// Init containers, the image map and each pod's own emptyDirs in the fake API server (issue 44:
// the agent's init container installs it into an emptyDir that every pod of a gang has to
// itself).

#include <gmock/gmock.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/integration/fake_kube/fake_kube_fixture.h"

namespace orch::fake_kube::testing {
namespace {

using ::testing::HasSubstr;

class InitContainersTest : public FakeKubeTest {
 protected:
  void SetUp() override {
    FakeKubeTest::SetUp();
    start_server();
  }

  static json container(const std::string& name, const std::string& script,
                        const std::string& image = "busybox") {
    return {{"name", name},
            {"image", image},
            {"command", {"/bin/sh", "-c", script}},
            {"volumeMounts", json::array({{{"name", "shared"}, {"mountPath", kShared}}})}};
  }

  // A Job whose pods run `inits` in order, then `main`, all mounting the emptyDir "shared".
  static json job_with_inits(const std::string& name, const json& inits, const std::string& main) {
    json j = job(name, main);
    json& spec = j["spec"]["template"]["spec"];
    spec["initContainers"] = inits;
    spec["containers"][0] = container("main", main);
    spec["volumes"] = json::array({{{"name", "shared"}, {"emptyDir", json::object()}}});
    return j;
  }

  std::string log_of(const json& pod, const std::string& container = "") {
    std::string target =
        "/api/v1/namespaces/default/pods/" + pod["metadata"]["name"].get<std::string>() + "/log";
    if (!container.empty()) target += "?container=" + container;
    return call("GET", target).body;
  }

  // The pod's directory on this machine (the fake's hook).
  std::string dir_of(const json& pod) {
    return get("/fake/namespaces/default/pods/" +
               pod["metadata"]["name"].get<std::string>())["dir"];
  }

  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  static constexpr const char* kShared = "/orchestrate/fake-kube-test";
};

TEST_F(InitContainersTest, InitContainersRunInOrderToCompletionBeforeTheFirstContainer) {
  const std::string order = std::string(kShared) + "/order";
  create_job(job_with_inits("inits",
                            json::array({container("first", "sleep 0.3; echo one >> " + order),
                                         container("second", "echo two >> " + order)}),
                            "cat " + order + "; echo main"));
  const json pod = wait_pod_phase("inits", "Succeeded");
  EXPECT_EQ(log_of(pod), "one\ntwo\nmain\n");
  const json& inits = pod["status"]["initContainerStatuses"];
  ASSERT_EQ(inits.size(), 2u) << pod["status"].dump(1);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(inits[i]["name"], i == 0 ? "first" : "second");
    EXPECT_EQ(inits[i]["state"]["terminated"]["reason"], "Completed");
    EXPECT_EQ(inits[i]["state"]["terminated"]["exitCode"], 0);
    EXPECT_EQ(inits[i]["ready"], true);
  }
}

TEST_F(InitContainersTest, APodIsPendingAndNotInitializedWhileItsInitContainerRuns) {
  create_job(job_with_inits("slow", json::array({container("wait", "sleep 30")}), "echo main"));
  const json list =
      wait_for("/api/v1/namespaces/default/pods?labelSelector=job-name%3Dslow", [](const json& l) {
        json list = l;  // not const: a missing key reads null
        return !list["items"].empty() &&
               list["items"][0]["status"]["initContainerStatuses"][0]["state"].contains("running");
      });
  const json pod = list["items"][0];
  EXPECT_EQ(pod["status"]["phase"], "Pending");
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"], "PodInitializing");
  bool initialized_false = false;
  for (const json& c : pod["status"]["conditions"]) {
    if (c["type"] != "Initialized") continue;
    initialized_false = c["status"] == "False" && c["reason"] == "ContainersNotInitialized" &&
                        c["message"] == "containers with incomplete status: [wait]";
  }
  EXPECT_TRUE(initialized_false) << pod["status"]["conditions"].dump(1);
}

TEST_F(InitContainersTest, AFailingInitContainerFailsThePodAndTheContainerNeverRuns) {
  const std::string ran = dir_.path() + "/main-ran";
  create_job(job_with_inits("badinit", json::array({container("install", "echo no >&2; exit 7")}),
                            "touch " + ran));
  const json pod = wait_pod_phase("badinit", "Failed");
  const json& init = pod["status"]["initContainerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(init["exitCode"], 7);
  EXPECT_EQ(init["reason"], "Error");
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"], "PodInitializing");
  const json done = wait_for("/apis/batch/v1/namespaces/default/jobs/badinit", [](const json& j) {
    return j["status"].value("failed", 0) == 1 && j["status"].contains("conditions");
  });
  EXPECT_EQ(last_condition(done)["type"], "Failed");
  EXPECT_FALSE(std::filesystem::exists(ran)) << "the job's container ran after a failed init";
}

TEST_F(InitContainersTest, TwoPodsWithTheSameEmptyDirMountPathEachHaveTheirOwn) {
  const std::string mine = std::string(kShared) + "/mine";
  json j = job_with_inits(
      "gang", json::array({container("install", "echo $JOB_COMPLETION_INDEX > " + mine)}),
      "sleep 0.5; cat " + mine);
  j["spec"]["completionMode"] = "Indexed";
  j["spec"]["completions"] = 2;
  j["spec"]["parallelism"] = 2;
  create_job(j);
  wait_for("/apis/batch/v1/namespaces/default/jobs/gang",
           [](const json& job) { return job["status"].value("succeeded", 0) == 2; });
  const json pods = job_pods("gang");
  ASSERT_EQ(pods.size(), 2u);
  std::set<std::string> logs;
  for (const json& pod : pods) {
    const std::string index =
        pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"];
    EXPECT_EQ(log_of(pod), index + "\n") << "pod " << index << " read another pod's emptyDir";
    EXPECT_EQ(read(dir_of(pod) + "/volumes/shared/mine"), index + "\n");
    logs.insert(log_of(pod));
  }
  EXPECT_EQ(logs.size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(kShared)) << "an emptyDir is no link on this machine";
}

TEST_F(InitContainersTest, TheAgentImageInstallsThisBuildsAgentAndTheJobRunsUnderIt) {
  json j = job("agent", "unused");
  json& spec = j["spec"]["template"]["spec"];
  spec["volumes"] = json::array({{{"name", "agent"}, {"emptyDir", json::object()}}});
  const json mount = json::array({{{"name", "agent"}, {"mountPath", "/orchestrate/agent"}}});
  spec["initContainers"] = json::array(
      {{{"name", "install-agent"},
        {"image", "ghcr.io/orchestrate-dev/orchestrate-agent:0.1.0"},
        {"command", {"/orchestrate-agent", "install", "/orchestrate/agent/orchestrate-agent"}},
        {"volumeMounts", mount}}});
  spec["containers"][0]["command"] = {"/orchestrate/agent/orchestrate-agent",
                                      "run",
                                      "--events",
                                      "/orchestrate/agent/events.jsonl",
                                      "--watch-s",
                                      "0",
                                      "--",
                                      "/bin/sh",
                                      "-c",
                                      "echo under the agent"};
  spec["containers"][0]["volumeMounts"] = mount;
  create_job(j);
  const json pod = wait_pod_phase("agent", "Succeeded");
  EXPECT_EQ(log_of(pod), "under the agent\n");
  const std::string events = read(dir_of(pod) + "/volumes/agent/events.jsonl");
  EXPECT_THAT(events, HasSubstr("\"event\":\"start\""));
  EXPECT_THAT(events, HasSubstr("\"event\":\"exit\""));
}

TEST_F(InitContainersTest, AnImageWithoutTheCommandFailsItsInitContainerWithTheRuntimesMessage) {
  json j = job_with_inits(
      "noagent",
      json::array({{{"name", "install-agent"},
                    {"image", "ghcr.io/orchestrate-dev/orchestrate-agent:0.1.0"},
                    {"command", {"/bin/sh", "-c", "echo a shell the image does not have"}}}}),
      "echo main");
  create_job(j);
  const json pod = wait_pod_phase("noagent", "Failed");
  const json& init = pod["status"]["initContainerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(init["reason"], "StartError");
  EXPECT_THAT(init["message"].get<std::string>(), HasSubstr("no such file or directory"));
}

}  // namespace
}  // namespace orch::fake_kube::testing
