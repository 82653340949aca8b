// The agent in every pod (issue 44): the init container that installs it into an emptyDir, the
// job's command under its `run`, the push variables and the Secret's key, "none" keeping the old
// pod, and the cluster keys kubernetes.agent_image and kubernetes.push_url.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "adapters/kubernetes/kube_agent_container.h"
#include "adapters/kubernetes/kube_manifest.h"
#include "adapters/kubernetes/kube_status.h"
#include "scheduler/common/base64.h"
#include "scheduler/model/job_shape.h"
#include "scheduler/model/launch_contract.h"
#include "scheduler/spec/clusters_parser.h"
#include "tests/unit/kube/fixture.h"

namespace orch::kube {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::request;

ClusterSpec agent_cluster() {
  ClusterSpec c;
  c.name = "kube-east";
  c.provider = "kubernetes";
  c.kubernetes.pod.image = "nvcr.io/nvidia/pytorch:24.05-py3";
  c.kubernetes.agent_image = "registry.example/orchestrate-agent:test";
  return c;
}

json pod_spec_of(const KubeLaunchPlan& p) {
  return json::parse(p.job_body)["spec"]["template"]["spec"];
}

KubeLaunchPlan plan_of(const LaunchRequest& r, const ClusterSpec& c = agent_cluster(),
                       const PushLaunch* push = nullptr) {
  auto plan = make_launch_plan(r, c, "ml", push);
  EXPECT_TRUE(plan.ok()) << plan.error().message;
  return plan.ok() ? *plan : KubeLaunchPlan{};
}

// The words of the command after the agent's "--".
std::vector<std::string> after_dashes(const json& command) {
  std::vector<std::string> out;
  bool seen = false;
  for (const auto& w : command) {
    if (seen) out.push_back(w.get<std::string>());
    if (w == "--") seen = true;
  }
  return out;
}

// The value following `flag` in the command, "" when the flag is not there.
std::string flag_value(const json& command, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < command.size(); ++i) {
    if (command[i] == flag) return command[i + 1].get<std::string>();
    if (command[i] == "--") break;
  }
  return "";
}

json env_entry(const json& container, const std::string& name) {
  for (const auto& e : container["env"]) {
    if (e["name"] == name) return e;
  }
  return json();
}

TEST(kube_agent_manifest, TheDefaultAgentImageIsThisReleasesOwn) {
  EXPECT_EQ(std::string(ORCH_PROJECT_VERSION), std::string(ORCH_VERSION));
  EXPECT_EQ(KubernetesSpec{}.agent_image,
            std::string("ghcr.io/orchestrate-dev/orchestrate-agent:") + ORCH_VERSION);
}

TEST(kube_agent_manifest, AnInitContainerOfTheAgentImageInstallsTheAgentIntoAnEmptyDir) {
  const json spec = pod_spec_of(plan_of(request()));
  ASSERT_EQ(spec["initContainers"].size(), 1u) << spec.dump();
  const json& init = spec["initContainers"][0];
  EXPECT_EQ(init["name"], "install-agent");
  EXPECT_EQ(init["image"], "registry.example/orchestrate-agent:test");
  EXPECT_EQ(init["command"],
            json::array({"/orchestrate-agent", "install", "/orchestrate/agent/orchestrate-agent"}));
  EXPECT_EQ(init["volumeMounts"],
            json::parse(R"([{"name":"orchestrate-agent","mountPath":"/orchestrate/agent"}])"));
  EXPECT_FALSE(init.contains("resources")) << "the init container asks for no GPU";
  json agent_volume;
  for (const auto& v : spec["volumes"]) {
    if (v["name"] == "orchestrate-agent") agent_volume = v;
  }
  EXPECT_EQ(agent_volume, json::parse(R"({"name":"orchestrate-agent","emptyDir":{}})"));
  const json& mounts = spec["containers"][0]["volumeMounts"];
  EXPECT_NE(std::find(mounts.begin(), mounts.end(), init["volumeMounts"][0]), mounts.end())
      << mounts.dump();
}

TEST(kube_agent_manifest, TheJobRunsUnderTheAgentWithTheSlurmFlagsAndAPlaceOfItsOwn) {
  LaunchRequest r = request();
  r.heartbeat_s = 5;
  r.hang_after_s = 900;
  r.io_stall_after_s = 120;
  r.command = "echo $HOME costs $(5)";
  ClusterSpec c = agent_cluster();
  c.live_watch.nvidia_smi = "none";
  const json container = pod_spec_of(plan_of(r, c))["containers"][0];
  const json& command = container["command"];
  EXPECT_EQ(command[0], "/orchestrate/agent/orchestrate-agent");
  EXPECT_EQ(command[1], "run");
  EXPECT_EQ(flag_value(command, "--events"), "/orchestrate/agent/events.jsonl");
  EXPECT_EQ(flag_value(command, "--heartbeat-s"), "5");
  EXPECT_EQ(flag_value(command, "--hang-after-s"), "900");
  EXPECT_EQ(flag_value(command, "--io-stall-after-s"), "120");
  EXPECT_EQ(flag_value(command, "--watch-s"), "2");
  EXPECT_EQ(flag_value(command, "--nvidia-smi"), "none");
  // A pod alone is rank 0 of 1, meeting at its own loopback.
  EXPECT_EQ(flag_value(command, "--node-rank"), "0");
  EXPECT_EQ(flag_value(command, "--nnodes"), "1");
  EXPECT_EQ(flag_value(command, "--tasks-per-node"), "1");
  EXPECT_EQ(flag_value(command, "--local-rank"), "0");
  EXPECT_EQ(flag_value(command, "--master-addr"), "127.0.0.1");
  EXPECT_EQ(flag_value(command, "--master-port"), std::to_string(master_port_for(r.token)));
  // After "--", the job's own words, every '$' doubled for the kubelet.
  std::vector<std::string> job;
  for (const auto& w : job_shell_argv(r.shell, r.command)) job.push_back(escape_kube_references(w));
  EXPECT_EQ(after_dashes(command), job);
  // The node the agent names comes from the downward API.
  EXPECT_EQ(env_entry(container, "ORCH_NODE_NAME")["valueFrom"]["fieldRef"]["fieldPath"],
            "spec.nodeName");
}

TEST(kube_agent_manifest, AGangsPodTakesItsRankFromTheCompletionIndex) {
  LaunchRequest r = request();
  r.nodes = 3;
  const KubeLaunchPlan p = plan_of(r);
  const json command = pod_spec_of(p)["containers"][0]["command"];
  // The one reference the kubelet expands: ORCH_NODE_RANK, itself from the completion index.
  EXPECT_EQ(flag_value(command, "--node-rank"), "$(ORCH_NODE_RANK)");
  EXPECT_EQ(flag_value(command, "--nnodes"), "3");
  EXPECT_EQ(flag_value(command, "--master-addr"), p.job_name + "-0." + p.service_name);
  EXPECT_EQ(expand_kube_references(flag_value(command, "--node-rank"), {{"ORCH_NODE_RANK", "2"}}),
            "2");
}

TEST(kube_agent_manifest, PushingAddsItsVariablesAndTheCredentialOnlyByReference) {
  const PushLaunch push{"https://orch.example:8443", "-----BEGIN CERTIFICATE-----\n$x\n",
                        "orch_att_0123abcd"};
  LaunchRequest r = request();  // no secret_env: the Secret is made for the credential alone
  const KubeLaunchPlan p = plan_of(r, agent_cluster(), &push);
  const json container = pod_spec_of(p)["containers"][0];
  EXPECT_EQ(env_entry(container, "ORCH_PUSH_URL")["value"], "https://orch.example:8443");
  EXPECT_EQ(env_entry(container, "ORCH_PUSH_CA")["value"], "-----BEGIN CERTIFICATE-----\n$$x\n");
  EXPECT_EQ(env_entry(container, "ORCH_PUSH_CREDENTIAL"),
            json::parse(R"({"name":"ORCH_PUSH_CREDENTIAL","valueFrom":{"secretKeyRef":)"
                        R"({"name":"orch-12-3-mx325f71-secret","key":"ORCH_PUSH_CREDENTIAL"}}})"));
  EXPECT_THAT(p.job_body, ::testing::Not(HasSubstr("orch_att_0123abcd")));
  EXPECT_EQ(p.secret_name, "orch-12-3-mx325f71-secret");
  ASSERT_FALSE(p.secret_body.empty());
  const json secret = json::parse(p.secret_body);
  EXPECT_EQ(secret["data"]["ORCH_PUSH_CREDENTIAL"], encode_base64("orch_att_0123abcd"));
  EXPECT_EQ(p.secret_values.at("ORCH_PUSH_CREDENTIAL"), "orch_att_0123abcd");
}

TEST(kube_agent_manifest, AgentImageNoneKeepsThePodOfOld) {
  ClusterSpec c = agent_cluster();
  c.kubernetes.agent_image = "none";
  const PushLaunch push{"https://orch.example:8443", "", "orch_att_0123abcd"};
  const KubeLaunchPlan p = plan_of(request(), c, &push);
  const json spec = pod_spec_of(p);
  EXPECT_FALSE(spec.contains("initContainers"));
  EXPECT_FALSE(spec.contains("volumes"));
  const json& container = spec["containers"][0];
  json old = json::array();
  for (const auto& w : job_shell_argv(request().shell, request().command)) {
    old.push_back(escape_kube_references(w));
  }
  EXPECT_EQ(container["command"], old);
  EXPECT_TRUE(env_entry(container, "ORCH_PUSH_URL").is_null()) << "no agent, nothing pushes";
  EXPECT_TRUE(env_entry(container, "ORCH_NODE_NAME").is_null());
  EXPECT_TRUE(p.secret_body.empty());
}

TEST(kube_agent_manifest, APushThatCannotWorkIsRefusedSayingWhy) {
  for (const char* url : {"http://orch.example", "https://orch.example/api", "orch.example"}) {
    const PushLaunch push{url, "", "orch_att_1"};
    auto plan = make_launch_plan(request(), agent_cluster(), "ml", &push);
    ASSERT_FALSE(plan.ok()) << url;
    EXPECT_THAT(plan.error().message, HasSubstr("https://HOST[:PORT]")) << url;
  }
  const PushLaunch no_credential{"https://orch.example", "", ""};
  auto plan = make_launch_plan(request(), agent_cluster(), "ml", &no_credential);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.error().message, HasSubstr("credential is empty"));
}

TEST(kube_agent_manifest, AVolumeInTheAgentsPlaceIsRefused) {
  LaunchRequest r = request();
  PodVolume v;
  v.name = "orchestrate-agent";
  v.claim = "data";
  v.mount = "/data";
  r.pod.volumes = {v};
  auto plan = make_launch_plan(r, agent_cluster(), "ml");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.error().message, HasSubstr("the agent's"));
}

TEST(kube_agent_manifest, AnAgentImageWithBlanksIsRefusedNamingTheKey) {
  ClusterSpec c = agent_cluster();
  c.kubernetes.agent_image = "bad image";
  auto plan = make_launch_plan(request(), c, "ml");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.error().message, HasSubstr("kubernetes.agent_image of cluster 'kube-east'"));
}

// A pod of a Job whose agent init container is in `init_state`, the job's container waiting
// its turn.
std::string pod_with_init(const std::string& phase, const std::string& init_state) {
  return R"({"metadata":{"name":"orch-1-1-x-abcde","namespace":"ml"},"spec":{"nodeName":"n0"},)"
         R"("status":{"phase":")" +
         phase + R"(","initContainerStatuses":[{"name":"install-agent","state":)" + init_state +
         R"(}],"containerStatuses":[{"name":"job","state":{"waiting":{"reason":)"
         R"("PodInitializing"}}}]}})";
}

TEST(kube_agent_manifest, AnAgentImageThatCannotBePulledEndsTheAttemptSayingSo) {
  auto pod = parse_pod(pod_with_init(
      "Pending", R"({"waiting":{"reason":"ImagePullBackOff","message":"Back-off pulling image)"
                 R"( \"registry.example/orchestrate-agent:test\""}})"));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  const AttemptView view = map_attempt({*pod}, std::nullopt);
  EXPECT_EQ(view.phase, RunPhase::exited);
  EXPECT_TRUE(view.pods_left);
  ASSERT_TRUE(view.exit.has_value());
  EXPECT_THAT(view.exit->detail, HasSubstr("init container install-agent"));
  EXPECT_THAT(view.exit->detail, HasSubstr("orchestrate-agent:test"));
}

TEST(kube_agent_manifest, AFailedAgentInitContainerFailsTheAttemptWithItsExitCode) {
  auto pod =
      parse_pod(pod_with_init("Failed", R"({"terminated":{"exitCode":1,"reason":"Error"}})"));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  const AttemptView view = map_attempt({*pod}, std::nullopt);
  EXPECT_EQ(view.phase, RunPhase::exited);
  ASSERT_TRUE(view.exit.has_value());
  EXPECT_EQ(view.exit->exit_code, 1);
  EXPECT_THAT(view.exit->detail, HasSubstr("init container install-agent"));
}

TEST(kube_agent_manifest, AnInitContainerAtWorkKeepsThePodQueued) {
  auto pod =
      parse_pod(pod_with_init("Pending", R"({"running":{"startedAt":"2026-12-07T20:00:00Z"}})"));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(map_attempt({*pod}, std::nullopt).phase, RunPhase::queued);
}

std::string clusters_yaml(const std::string& extra) {
  return "clusters:\n  - name: k\n    provider: kubernetes\n"
         "    kubernetes: {kubeconfig: k, image: i" +
         extra + "}\n";
}

TEST(kube_agent_manifest, TheClusterKeysAreReadWithTheirDefaults) {
  auto plain = parse_clusters_file(clusters_yaml(""), "clusters.yaml");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->clusters[0].kubernetes.agent_image, kDefaultAgentImage);
  EXPECT_EQ(plain->clusters[0].kubernetes.push_url, "");
  auto set = parse_clusters_file(
      clusters_yaml(", agent_image: none, push_url: \"https://10.0.0.5:8443\""), "clusters.yaml");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->clusters[0].kubernetes.agent_image, "none");
  EXPECT_EQ(set->clusters[0].kubernetes.push_url, "https://10.0.0.5:8443");
}

TEST(kube_agent_manifest, ABadPushUrlIsRefusedWhereItIsWritten) {
  for (const char* url : {"http://orch.example", "https://orch.example/path", "https://:8443",
                          "https://orch.example:99999"}) {
    auto r = parse_clusters_file(clusters_yaml(std::string(", push_url: \"") + url + "\""),
                                 "clusters.yaml");
    ASSERT_FALSE(r.ok()) << url;
    EXPECT_THAT(r.error().message, HasSubstr("push_url")) << url;
    EXPECT_THAT(r.error().message, HasSubstr("https://HOST[:PORT]")) << url;
    EXPECT_THAT(r.error().message, HasSubstr("clusters.yaml")) << url;
  }
}

}  // namespace
}  // namespace orch::kube
