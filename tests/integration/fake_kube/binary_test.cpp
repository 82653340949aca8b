// The fake-kube-apiserver program: flags, the "listening on" line, nodes from flags, SIGTERM.
// And the pure parts: selectors, the scheduler's message, durations.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <gmock/gmock.h>

#include "testkit/fake_kube/kube_json.h"
#include "testkit/fake_kube/scheduler.h"
#include "testkit/fake_kube/selectors.h"
#include "testkit/fake_kube/tables.h"
#include "tests/integration/fake_kube/fake_kube_fixture.h"

namespace orch::fake_kube::testing {
namespace {

TEST(FakeKubeBinary, ServesUntilSigterm) {
  e2e::TempDir dir;
  const TestPki& pki = shared_pki();
  const std::string token = random_token();
  int out[2];
  ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(out[1], 1);
    execl(ORCH_BIN_DIR "/fake-kube-apiserver", "fake-kube-apiserver", "--port", "0", "--cert",
          pki.server_cert.c_str(), "--key", pki.server_key.c_str(), "--token", token.c_str(),
          "--state-dir", dir.path().c_str(), "--node", "gpu-a:4:NVIDIA-A100-SXM4-80GB", "--node",
          "gpu-b:2", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::string line;
  char c = 0;
  pollfd p{out[0], POLLIN, 0};
  while (line.find('\n') == std::string::npos && poll(&p, 1, 10000) > 0 &&
         read(out[0], &c, 1) == 1) {
    line += c;
  }
  close(out[0]);
  const std::string prefix = "listening on https://127.0.0.1:";
  ASSERT_EQ(line.rfind(prefix, 0), 0u) << line;
  const int port = std::stoi(line.substr(prefix.size()));

  const KubeEndpoint ep{"127.0.0.1", port, pki.ca_cert, token};
  const KubeReply nodes = kube_request(ep, "GET", "/api/v1/nodes");
  ASSERT_EQ(nodes.status, 200) << nodes.error;
  json list = nodes.json();
  ASSERT_EQ(list["items"].size(), 2u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "gpu-a");
  EXPECT_EQ(list["items"][0]["status"]["allocatable"]["nvidia.com/gpu"], "4");
  EXPECT_EQ(list["items"][0]["metadata"]["labels"]["nvidia.com/gpu.product"],
            "NVIDIA-A100-SXM4-80GB");

  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(FakeKubePure, LabelSelectors) {
  json labels = {{"app", "x"}, {"tier", "gpu"}};
  EXPECT_TRUE(LabelSelector::parse("app=x,tier in (gpu, cpu)").matches(labels));
  EXPECT_TRUE(LabelSelector::parse("app==x,!missing,tier").matches(labels));
  EXPECT_FALSE(LabelSelector::parse("app!=x").matches(labels));
  EXPECT_FALSE(LabelSelector::parse("tier notin (gpu)").matches(labels));
  EXPECT_TRUE(LabelSelector::parse("").matches(labels));
  EXPECT_THROW(LabelSelector::parse("tier in gpu"), ApiError);
  EXPECT_THROW(FieldSelector::parse("spec.foo=1"), ApiError);
  EXPECT_TRUE(FieldSelector::parse("metadata.name=a,status.phase!=Failed")
                  .matches({{"metadata", {{"name", "a"}}}, {"status", {{"phase", "Running"}}}}));
}

TEST(FakeKubePure, SchedulerExplainsUnschedulablePods) {
  json pod = {
      {"spec",
       {{"containers",
         json::array({{{"name", "m"}, {"resources", {{"limits", {{"nvidia.com/gpu", "4"}}}}}}})},
        {"tolerations", json::array()}}}};
  std::vector<json> nodes;
  for (const auto& c : uniform_nodes(3, 8)) nodes.push_back(Cluster::node_object(c));
  nodes[1]["spec"]["taints"] =
      json::array({{{"key", "dedicated"}, {"value", "infer"}, {"effect", "NoSchedule"}}});
  nodes[2]["spec"]["unschedulable"] = true;
  json busy = {{"spec", {{"nodeName", "node-0"}, {"containers", pod["spec"]["containers"]}}},
               {"status", {{"phase", "Running"}}}};
  EXPECT_EQ(schedule_pod(pod, nodes, {busy}).node, "node-0");  // 4 of 8 used, 4 free
  const Placement none = schedule_pod(pod, nodes, {busy, busy});
  EXPECT_EQ(none.node, "");
  EXPECT_EQ(none.message,
            "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated "
            "taint {dedicated: infer}, 1 node(s) were unschedulable. preemption: 0/3 nodes are "
            "available: 3 Preemption is not helpful for scheduling.");
  json tolerant = pod;
  tolerant["spec"]["tolerations"] = json::array({{{"key", "dedicated"}, {"operator", "Exists"}}});
  EXPECT_EQ(schedule_pod(tolerant, nodes, {busy, busy}).node, "node-1");
}

TEST(FakeKubePure, HumanDurations) {
  EXPECT_EQ(human_duration(5), "5s");
  EXPECT_EQ(human_duration(119), "119s");
  EXPECT_EQ(human_duration(200), "3m20s");
  EXPECT_EQ(human_duration(3600), "60m");
  EXPECT_EQ(human_duration(5 * 3600 + 60), "5h1m");
  EXPECT_EQ(human_duration(3 * 86400), "3d");
}

}  // namespace
}  // namespace orch::fake_kube::testing
