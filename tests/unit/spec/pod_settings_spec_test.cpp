// The pod settings of a `kubernetes:` section (issue 20), in a cluster entry and in a job file:
// what they read into, what they refuse and where, how a job's merge over its cluster's, and
// that a stored job spec keeps them. Issue 44: annotations, labels, securityContext and the
// job's topology hint (refusals name the key).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/spec/clusters_parser.h"
#include "scheduler/spec/job_spec_json.h"
#include "scheduler/spec/job_spec_parser.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

Result<ClustersFile> kube_cluster(const std::string& extra) {
  return parse_clusters_file(
      "clusters:\n  - name: gke\n    provider: kubernetes\n    kubernetes:\n"
      "      kubeconfig: /etc/kube.conf\n      image: nvcr.io/nvidia/pytorch:24.05-py3\n" +
          extra,
      "c.yaml");
}

TEST(PodSettingsSpec, AClusterReadsEveryPodSetting) {
  auto file = kube_cluster(
      "      image_pull_secrets: [ngc]\n"
      "      service_account: trainer\n"
      "      shm_size: 64Gi\n"
      "      node_selector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}\n"
      "      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
      "      extra_resources: {rdma/ib: 1}\n"
      "      priority_class: high\n"
      "      volumes:\n"
      "        - {name: ckpt, claim: train-ckpt, mount: /ckpt}\n"
      "        - {name: nvme, host_path: /mnt/nvme, mount: /scratch, read_only: true}\n"
      "      allow_host_path: true\n"
      "      queue: team-a\n"
      "      helper_image: busybox:stable\n"
      "      agent: /opt/orchestrate/orchestrate-agent\n");
  ASSERT_TRUE(file.ok()) << file.error().message;
  const KubernetesSpec& k = file->clusters.at(0).kubernetes;
  EXPECT_EQ(k.pod.image, "nvcr.io/nvidia/pytorch:24.05-py3");
  EXPECT_EQ(k.pod.image_pull_secrets, std::vector<std::string>{"ngc"});
  EXPECT_EQ(k.pod.service_account, "trainer");
  EXPECT_EQ(k.pod.shm_size, "64Gi");
  EXPECT_EQ(k.pod.node_selector.at("cloud.google.com/gke-accelerator"), "nvidia-h100-80gb");
  ASSERT_EQ(k.pod.tolerations.size(), 1U);
  EXPECT_EQ(k.pod.tolerations[0].op, "Exists");
  EXPECT_EQ(k.pod.tolerations[0].effect, "NoSchedule");
  EXPECT_EQ(k.pod.extra_resources.at("rdma/ib"), "1");
  EXPECT_EQ(k.pod.priority_class, "high");
  ASSERT_EQ(k.pod.volumes.size(), 2U);
  EXPECT_EQ(k.pod.volumes[0].claim, "train-ckpt");
  EXPECT_EQ(k.pod.volumes[1].host_path, "/mnt/nvme");
  EXPECT_TRUE(k.pod.volumes[1].read_only);
  EXPECT_TRUE(k.allow_host_path);
  EXPECT_EQ(k.queue, "team-a");
  EXPECT_EQ(k.helper_image, "busybox:stable");
  EXPECT_EQ(k.agent, "/opt/orchestrate/orchestrate-agent");
}

TEST(PodSettingsSpec, BadValuesAreNamedWhereTheyAre) {
  const auto fails = [](const std::string& extra, const std::string& why) {
    auto file = kube_cluster(extra);
    ASSERT_FALSE(file.ok()) << extra;
    EXPECT_THAT(file.error().message, HasSubstr(why)) << extra;
    EXPECT_THAT(file.error().message, HasSubstr("c.yaml:")) << "a position";
  };
  fails("      shm_size: lots\n", "a size such as 64Gi");
  fails("      volumes: [{name: ckpt, mount: /ckpt}]\n",
        "exactly one of \"claim\" and \"host_path\"");
  fails("      volumes: [{name: ckpt, claim: a, host_path: /x, mount: /ckpt}]\n", "exactly one of");
  fails("      volumes: [{name: ckpt, claim: a, mount: relative}]\n", "an absolute path");
  fails("      volumes: [{name: Ckpt, claim: a, mount: /ckpt}]\n", "DNS-1123 label");
  fails("      volumes: [{name: a, claim: a, mount: /x}, {name: a, claim: b, mount: /y}]\n",
        "repeats the name a");
  fails("      volumes: [{name: a, claim: a, mount: /dev/shm}]\n", "shm_size: 64Gi");
  fails("      tolerations: [{key: k, operator: Exists, value: v}]\n",
        "operator Exists and a value");
  fails("      tolerations: [{key: k, operator: Maybe}]\n", "Exists or Equal");
  fails("      tolerations: [{key: k, effect: Sometimes}]\n", "NoSchedule, PreferNoSchedule");
  fails("      extra_resources: {rdma/ib: many}\n", "not a quantity");
  fails("      image_pull_secrets: [Not_A_Name]\n", "Secret names");
  fails("      volumes: [{name: a, claim: a, mount: /a, size: 1Gi}]\n", "size");
}

JobSpec job(const std::string& kubernetes) {
  auto spec = parse_job_spec(
      "name: train\ncommand: python train.py\nkubernetes: " + kubernetes + "\n", "job.yaml");
  EXPECT_TRUE(spec.ok()) << spec.error().message;
  return spec.ok() ? *spec : JobSpec{};
}

TEST(PodSettingsSpec, AJobsSectionReadsBackFromItsStoredForm) {
  JobSpec spec =
      job("{image: ghcr.io/team/trainer:7, shm_size: 16Gi, volumes: [{name: data, claim: datasets, "
          "mount: /data, read_only: true}], tolerations: [{key: spot, operator: Equal, value: "
          "'true'}]}");
  EXPECT_EQ(spec.kubernetes.image, "ghcr.io/team/trainer:7");
  EXPECT_EQ(spec.kubernetes.shm_size, "16Gi");
  ASSERT_EQ(spec.kubernetes.volumes.size(), 1U);
  EXPECT_TRUE(spec.kubernetes.volumes[0].read_only);
  auto stored = job_spec_from_json(job_spec_to_json(spec));
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  EXPECT_EQ(stored->kubernetes, spec.kubernetes);

  auto bad = parse_job_spec("name: t\ncommand: x\nkubernetes: {gpus: 8}\n", "job.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("gpus"));
}

TEST(PodSettingsSpec, AJobsSettingsMergeOverTheClusters) {
  PodSettings cluster;
  cluster.image = "base";
  cluster.image_pull_secrets = {"ngc"};
  cluster.node_selector = {{"pool", "gpu"}, {"zone", "a"}};
  cluster.volumes = {{"ckpt", "shared", "", "/ckpt", false}};
  cluster.tolerations = {{"spot", "Exists", "", ""}};
  PodSettings own;
  own.image = "mine";
  own.image_pull_secrets = {"ngc", "ghcr"};
  own.node_selector = {{"zone", "b"}};
  own.volumes = {{"ckpt", "private", "", "/ckpt", false}, {"data", "ds", "", "/data", true}};
  own.tolerations = {{"spot", "Exists", "", ""}};
  const PodSettings merged = merge_pod_settings(cluster, own);
  EXPECT_EQ(merged.image, "mine");
  EXPECT_EQ(merged.image_pull_secrets, (std::vector<std::string>{"ngc", "ghcr"}));
  EXPECT_EQ(merged.node_selector.at("pool"), "gpu");
  EXPECT_EQ(merged.node_selector.at("zone"), "b");
  ASSERT_EQ(merged.volumes.size(), 2U);
  EXPECT_EQ(merged.volumes[0].claim, "private");
  EXPECT_EQ(merged.tolerations.size(), 1U);
  EXPECT_EQ(merge_pod_settings(cluster, PodSettings{}), cluster);
}

// ---- issue 44: pod metadata, security and the topology hint ----

Result<JobSpec> job_file(const std::string& rest) {
  return parse_job_spec("name: train\ncommand: python train.py\n" + rest, "job.yaml");
}

TEST(PodSettingsSpec, AClusterReadsAnnotationsLabelsAndSecurity) {
  auto file = kube_cluster(
      "      annotations: {k8s.v1.cni.cncf.io/networks: rdma-net}\n"
      "      labels: {team: research, example.com/tier: gold}\n"
      "      host_network: true\n"
      "      security_context:\n"
      "        capabilities: {add: [IPC_LOCK, SYS_RESOURCE]}\n"
      "        privileged: false\n"
      "        run_as_user: 1000\n"
      "        run_as_group: 100\n");
  ASSERT_TRUE(file.ok()) << file.error().message;
  const PodSettings& pod = file->clusters.at(0).kubernetes.pod;
  EXPECT_EQ(pod.annotations.at("k8s.v1.cni.cncf.io/networks"), "rdma-net");
  EXPECT_EQ(pod.labels.at("team"), "research");
  EXPECT_EQ(pod.labels.at("example.com/tier"), "gold");
  EXPECT_EQ(pod.security.capabilities_add, (std::vector<std::string>{"IPC_LOCK", "SYS_RESOURCE"}));
  EXPECT_EQ(pod.security.privileged, false);
  EXPECT_EQ(pod.security.run_as_user, 1000);
  EXPECT_EQ(pod.security.run_as_group, 100);
  EXPECT_EQ(pod.security.host_network, true);
}

TEST(PodSettingsSpec, BadKeysAndValuesAreRefusedNamingTheKey) {
  const auto fails = [](const std::string& extra, const std::string& why) {
    auto file = kube_cluster(extra);
    ASSERT_FALSE(file.ok()) << extra;
    EXPECT_THAT(file.error().message, HasSubstr(why)) << extra;
    EXPECT_THAT(file.error().message, HasSubstr("c.yaml:")) << "a position";
  };
  fails("      labels: {team: \"two words\"}\n", "labels.team is \"two words\", not a label value");
  fails("      labels: {team: -dash}\n", "labels.team");
  fails("      labels: {\"bad key!\": x}\n", "a key of \"labels\" must be a key such as");
  fails("      annotations: {Example.COM/x: y}\n", "a key of \"annotations\"");
  fails("      annotations: {orchestrate.dev/job-name: mine}\n",
        "annotations.orchestrate.dev/job-name is orchestrate's own");
  fails("      labels: {app.kubernetes.io/managed-by: me}\n",
        "labels.app.kubernetes.io/managed-by");
  fails("      annotations: {big: " + std::string(300 * 1024, 'x') + "}\n", "at most 256 KiB");
  fails("      security_context: {capabilities: {add: [CAP_IPC_LOCK]}}\n", "no CAP_ prefix");
  fails("      security_context: {capabilities: {add: [ipc_lock]}}\n", "a capability such as");
  fails("      security_context: {run_as_user: -1}\n", "run_as_user");
  fails("      security_context: {run_as_root: true}\n", "run_as_root");
  fails("      security_context: {privileged: yes}\n", "privileged");
  fails("      host_network: 1\n", "host_network");
}

TEST(PodSettingsSpec, AJobsMetadataAndSecurityMergeOverTheClusters) {
  PodSettings cluster;
  cluster.annotations = {{"a", "cluster"}, {"b", "cluster"}};
  cluster.labels = {{"team", "infra"}};
  cluster.security.capabilities_add = {"IPC_LOCK"};
  cluster.security.run_as_user = 1000;
  cluster.security.host_network = true;
  PodSettings own;
  own.annotations = {{"b", "job"}};
  own.labels = {{"run", "7"}};
  own.security.capabilities_add = {"IPC_LOCK", "SYS_RESOURCE"};
  own.security.run_as_user = 2000;
  const PodSettings merged = merge_pod_settings(cluster, own);
  EXPECT_EQ(merged.annotations.at("a"), "cluster");
  EXPECT_EQ(merged.annotations.at("b"), "job");
  EXPECT_EQ(merged.labels.size(), 2U);
  EXPECT_EQ(merged.security.capabilities_add,
            (std::vector<std::string>{"IPC_LOCK", "SYS_RESOURCE"}));
  EXPECT_EQ(merged.security.run_as_user, 2000);
  EXPECT_EQ(merged.security.host_network, true) << "the cluster's where the job says nothing";
  EXPECT_FALSE(merged.security.privileged.has_value());
}

TEST(PodSettingsSpec, AJobsTopologyAndPodMetadataReadBackFromTheStoredForm) {
  auto spec = job_file(
      "topology: {level: cloud.provider.com/topology-block, required: true, switches: 2, "
      "switches_wait_s: 600}\n"
      "kubernetes: {labels: {run: ablation-3}, security_context: {capabilities: {add: "
      "[IPC_LOCK]}}, host_network: false}\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->topology.level, "cloud.provider.com/topology-block");
  EXPECT_TRUE(spec->topology.required);
  EXPECT_EQ(spec->topology.switches, 2);
  EXPECT_EQ(spec->topology.switches_wait_s, 600);
  EXPECT_EQ(spec->kubernetes.security.host_network, false);
  auto stored = job_spec_from_json(job_spec_to_json(*spec));
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  EXPECT_EQ(stored->topology, spec->topology);
  EXPECT_EQ(stored->kubernetes, spec->kubernetes);
  EXPECT_EQ(slurm_switches_option(spec->topology), "--switches=2@0:10:00");
}

TEST(PodSettingsSpec, ATopologyHintThatSaysNothingOrTooMuchIsRefused) {
  const auto fails = [](const std::string& topology, const std::string& why) {
    auto spec = job_file("topology: " + topology + "\n");
    ASSERT_FALSE(spec.ok()) << topology;
    EXPECT_THAT(spec.error().message, HasSubstr(why)) << topology;
    EXPECT_THAT(spec.error().message, HasSubstr("job.yaml:")) << "a position";
  };
  fails("{}", "\"topology\" says nothing");
  fails("{required: true, switches: 1}", "topology.required without a level");
  fails("{level: x, switches_wait_s: 60}", "topology.switches_wait_s without switches");
  fails("{switches: 0}", "switches");
  fails("{level: \"not a key!\"}", "a node label key");
  fails("{level: x, rack: 3}", "rack");
  fails("[block]", "topology");
}

TEST(PodSettingsSpec, SlurmGetsSwitchesOnlyFromAHintThatNamesThem) {
  EXPECT_EQ(slurm_switches_option(TopologyHint{"block", true, 0, 0}), "");
  EXPECT_EQ(slurm_switches_option(TopologyHint{"", false, 1, 0}), "--switches=1");
  EXPECT_EQ(slurm_switches_option(TopologyHint{"", false, 4, 3723}), "--switches=4@1:02:03");
}

}  // namespace
}  // namespace orch
