// Pod settings (issue 20) in what orchestrate POSTs: the job's pods (merged over the cluster's),
// Kueue's suspended Jobs, and the helper pods that list checkpoints and run probes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "adapters/kubernetes/kube_helper_pod.h"
#include "adapters/kubernetes/kube_manifest.h"
#include "adapters/kubernetes/kube_status.h"
#include "tests/unit/kube/fixture.h"

namespace orch::kube {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using testing::request;

ClusterSpec cluster() {
  ClusterSpec c;
  c.name = "gke";
  c.provider = "kubernetes";
  PodSettings& p = c.kubernetes.pod;
  p.image = "nvcr.io/nvidia/pytorch:24.05-py3";
  p.image_pull_secrets = {"ngc"};
  p.node_selector = {{"cloud.google.com/gke-accelerator", "nvidia-h100-80gb"}};
  p.tolerations = {{"cloud.google.com/gke-spot", "Equal", "true", "NoSchedule"}};
  p.volumes = {{"ckpt", "train-ckpt", "", "/ckpt", false}};
  p.extra_resources = {{"rdma/ib", "1"}};
  return c;
}

json job_of(const LaunchRequest& r, const ClusterSpec& c = cluster()) {
  auto plan = make_launch_plan(r, c, "ml");
  EXPECT_TRUE(plan.ok()) << plan.error().message;
  return plan.ok() ? json::parse(plan->job_body) : json();
}

TEST(kube_pod_settings, TheClustersSettingsReachEveryPod) {
  const json job = job_of(request());
  const json& spec = job["spec"]["template"]["spec"];
  const json& container = spec["containers"][0];
  EXPECT_EQ(container["image"], "nvcr.io/nvidia/pytorch:24.05-py3");
  EXPECT_EQ(spec["imagePullSecrets"], json::parse(R"([{"name":"ngc"}])"));
  EXPECT_EQ(spec["nodeSelector"]["cloud.google.com/gke-accelerator"], "nvidia-h100-80gb");
  // The GPU toleration first, the cluster's after it.
  ASSERT_EQ(spec["tolerations"].size(), 2U);
  EXPECT_EQ(spec["tolerations"][0]["key"], "nvidia.com/gpu");
  EXPECT_EQ(spec["tolerations"][1],
            json::parse(R"({"operator":"Equal","key":"cloud.google.com/gke-spot","value":"true",)"
                        R"("effect":"NoSchedule"})"));
  EXPECT_EQ(spec["volumes"][0],
            json::parse(R"({"name":"ckpt","persistentVolumeClaim":{"claimName":"train-ckpt",)"
                        R"("readOnly":false}})"));
  EXPECT_EQ(container["volumeMounts"][0],
            json::parse(R"({"name":"ckpt","mountPath":"/ckpt","readOnly":false})"));
  EXPECT_EQ(container["resources"]["limits"]["nvidia.com/gpu"], "8");
  EXPECT_EQ(container["resources"]["limits"]["rdma/ib"], "1");
  EXPECT_EQ(spec["automountServiceAccountToken"], false);
  EXPECT_FALSE(spec.contains("priorityClassName"));
  EXPECT_FALSE(job["spec"].contains("suspend"));
}

TEST(kube_pod_settings, AJobsOwnSettingsWinOrAdd) {
  LaunchRequest r = request();
  r.pod.image = "ghcr.io/team/trainer:7";
  r.pod.shm_size = "64Gi";
  r.pod.service_account = "trainer";
  r.pod.priority_class = "high";
  r.pod.node_selector = {{"pool", "a"}};
  r.pod.volumes = {{"ckpt", "other-claim", "", "/ckpt", false},
                   {"data", "datasets", "", "/data", true}};
  const json job = job_of(r);
  const json& spec = job["spec"]["template"]["spec"];
  const json& container = spec["containers"][0];
  EXPECT_EQ(container["image"], "ghcr.io/team/trainer:7");
  EXPECT_EQ(spec["serviceAccountName"], "trainer");
  EXPECT_EQ(spec["automountServiceAccountToken"], true) << "the job acts as that account";
  EXPECT_EQ(spec["priorityClassName"], "high");
  EXPECT_EQ(spec["nodeSelector"].size(), 2U);
  ASSERT_EQ(spec["volumes"].size(), 4U) << "the job's two, /dev/shm and the agent's";
  EXPECT_EQ(spec["volumes"][0]["persistentVolumeClaim"]["claimName"], "other-claim");
  EXPECT_EQ(spec["volumes"][1]["persistentVolumeClaim"]["readOnly"], true);
  EXPECT_EQ(
      spec["volumes"][2],
      json::parse(R"({"name":"orch-shm","emptyDir":{"medium":"Memory","sizeLimit":"64Gi"}})"));
  EXPECT_EQ(container["volumeMounts"][2]["mountPath"], "/dev/shm");
}

TEST(kube_pod_settings, NodeDirectoriesOnlyWhereTheClusterAllowsThem) {
  LaunchRequest r = request();
  r.pod.volumes = {{"scratch", "", "/mnt/nvme", "/scratch", false}};
  auto refused = make_launch_plan(r, cluster(), "ml");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::invalid);
  EXPECT_THAT(refused.error().message, HasSubstr("kubernetes.allow_host_path: true"));
  EXPECT_THAT(refused.error().message, HasSubstr("/mnt/nvme"));

  ClusterSpec allowing = cluster();
  allowing.kubernetes.allow_host_path = true;
  const json job = job_of(r, allowing);
  EXPECT_EQ(job["spec"]["template"]["spec"]["volumes"][1]["hostPath"],
            json::parse(R"({"path":"/mnt/nvme","type":"Directory"})"));

  // The cluster's own hostPath volumes are the admin's choice.
  ClusterSpec own = cluster();
  own.kubernetes.pod.volumes.push_back({"nvme", "", "/mnt/nvme", "/nvme", false});
  EXPECT_TRUE(make_launch_plan(request(), own, "ml").ok());

  LaunchRequest shm_name = request();
  shm_name.pod.volumes = {{"orch-shm", "x", "", "/x", false}};
  auto clash = make_launch_plan(shm_name, cluster(), "ml");
  ASSERT_FALSE(clash.ok());
  EXPECT_THAT(clash.error().message, HasSubstr("orch-shm"));

  LaunchRequest bad_image = request();
  bad_image.pod.image = "trainer latest";
  auto blank = make_launch_plan(bad_image, cluster(), "ml");
  ASSERT_FALSE(blank.ok());
  EXPECT_THAT(blank.error().message, HasSubstr("the job's kubernetes.image"));
}

TEST(kube_pod_settings, WithAQueueTheJobIsCreatedSuspendedForKueue) {
  ClusterSpec c = cluster();
  c.kubernetes.queue = "team-a";
  const json job = job_of(request(), c);
  EXPECT_EQ(job["spec"]["suspend"], true);
  EXPECT_EQ(job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "team-a");
  // The pods carry the usual labels only.
  EXPECT_FALSE(job["spec"]["template"]["metadata"]["labels"].contains("kueue.x-k8s.io/queue-name"));
}

TEST(kube_pod_settings, ASuspendedJobWithoutPodsIsQueuedWaitingForKueue) {
  KubeJobInfo job;
  job.name = "orch-7-1-abc";
  job.suspended = true;
  job.queue = "team-a";
  AttemptView view = map_attempt({}, job);
  EXPECT_EQ(view.phase, RunPhase::queued);
  EXPECT_THAT(view.note, HasSubstr("waits for Kueue to admit it (LocalQueue team-a)"));

  auto parsed =
      parse_job(R"({"metadata":{"name":"j","labels":{"kueue.x-k8s.io/queue-name":"q"}},)"
                R"("spec":{"suspend":true,"parallelism":1,"completions":1},"status":{}})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_TRUE(parsed->suspended);
  EXPECT_EQ(parsed->queue, "q");
}

TEST(kube_pod_settings, TheStorageHelperMountsTheVolumesAndNothingMore) {
  ClusterSpec c = cluster();
  c.kubernetes.pod.shm_size = "64Gi";
  c.kubernetes.pod.service_account = "trainer";
  c.kubernetes.pod.priority_class = "high";
  auto body = storage_helper_body(c, "ml");
  ASSERT_TRUE(body.ok()) << body.error().message;
  const json pod = json::parse(*body);
  EXPECT_EQ(pod["metadata"]["name"], storage_helper_name("gke"));
  EXPECT_EQ(pod["metadata"]["labels"]["orchestrate.dev/helper"], "storage");
  EXPECT_FALSE(pod["metadata"]["labels"].contains("app.kubernetes.io/managed-by"))
      << "the attempts' pod cache must not see it";
  const json& spec = pod["spec"];
  EXPECT_EQ(spec["containers"][0]["image"], "nvcr.io/nvidia/pytorch:24.05-py3");
  EXPECT_EQ(spec["volumes"].size(), 1U) << "no shm";
  EXPECT_FALSE(spec.contains("serviceAccountName"));
  EXPECT_EQ(spec["automountServiceAccountToken"], false);
  EXPECT_FALSE(spec.contains("priorityClassName"));
  EXPECT_FALSE(spec["containers"][0].contains("resources")) << "no GPUs, no extra resources";
  EXPECT_EQ(spec["activeDeadlineSeconds"], kHelperLifetimeS);

  c.kubernetes.helper_image = "busybox:stable";
  body = storage_helper_body(c, "ml");
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(json::parse(*body)["spec"]["containers"][0]["image"], "busybox:stable");
}

TEST(kube_pod_settings, ProbePodsArePinnedOnePerNode) {
  ClusterSpec c = cluster();
  c.kubernetes.agent = "/opt/orchestrate/orchestrate-agent";
  ProbeRequest r;
  r.token = "orch-burnin-GKE-1a";
  r.io_bytes = 1 << 20;
  r.compute_s = 1.5;
  r.timeout_s = 120;
  auto pods = probe_pods(c, "ml", r, {"gke-a", "gke-b"}, "/ckpt", 8);
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  ASSERT_EQ(pods->size(), 2U);
  EXPECT_NE((*pods)[0].name, (*pods)[1].name);
  const json pod = json::parse((*pods)[1].body);
  EXPECT_EQ((*pods)[1].node, "gke-b");
  EXPECT_EQ(pod["metadata"]["labels"]["orchestrate.dev/token"], "orch-burnin-GKE-1a");
  const json& spec = pod["spec"];
  EXPECT_EQ(spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                ["nodeSelectorTerms"][0]["matchFields"][0],
            json::parse(R"({"key":"metadata.name","operator":"In","values":["gke-b"]})"));
  const json& container = spec["containers"][0];
  EXPECT_EQ(container["command"],
            json::parse(R"(["/opt/orchestrate/orchestrate-agent","probe","--dir","/ckpt",)"
                        R"("--io-bytes","1048576","--compute-s","1.5"])"));
  EXPECT_EQ(container["env"][0]["valueFrom"]["fieldRef"]["fieldPath"], "spec.nodeName");
  EXPECT_EQ(container["resources"]["limits"]["nvidia.com/gpu"], "8");
  EXPECT_EQ(spec["activeDeadlineSeconds"], 120);

  EXPECT_FALSE(probe_pods(c, "ml", r, {"bad name"}, "/ckpt", 0).ok());
  EXPECT_FALSE(probe_pods(c, "ml", r, {"gke-a"}, "relative", 0).ok());
  r.token = "has space";
  EXPECT_FALSE(probe_pods(c, "ml", r, {"gke-a"}, "/ckpt", 0).ok());
}

// Issue 44: the pods' labels and annotations (the cluster's, the job's over them; orchestrate's
// own win), the container's securityContext and hostNetwork, and the topology hint as Kueue's
// annotation on the pod template.
TEST(kube_pod_settings, PodMetadataSecurityAndTheTopologyHintReachThePodTemplate) {
  ClusterSpec c = cluster();
  c.kubernetes.pod.labels = {{"team", "infra"}};
  c.kubernetes.pod.annotations = {{"k8s.v1.cni.cncf.io/networks", "rdma-net"}};
  c.kubernetes.pod.security.capabilities_add = {"IPC_LOCK"};
  c.kubernetes.pod.security.host_network = true;
  LaunchRequest r = request();
  r.pod.labels = {{"team", "research"}, {"run", "7"}};
  r.pod.security.run_as_user = 1000;
  r.topology = TopologyHint{"cloud.provider.com/topology-block", true, 2, 0};
  const json job = job_of(r, c);
  const json& meta = job["spec"]["template"]["metadata"];
  EXPECT_EQ(meta["labels"]["team"], "research");
  EXPECT_EQ(meta["labels"]["run"], "7");
  EXPECT_EQ(meta["labels"]["orchestrate.dev/token"], r.token) << "orchestrate's own stay";
  EXPECT_EQ(meta["annotations"]["k8s.v1.cni.cncf.io/networks"], "rdma-net");
  EXPECT_EQ(meta["annotations"]["kueue.x-k8s.io/podset-required-topology"],
            "cloud.provider.com/topology-block");
  EXPECT_FALSE(meta["annotations"].contains("kueue.x-k8s.io/podset-preferred-topology"));
  EXPECT_FALSE(job["metadata"]["labels"].contains("run")) << "the pods', not the Job's";
  const json& spec = job["spec"]["template"]["spec"];
  EXPECT_EQ(spec["hostNetwork"], true);
  EXPECT_EQ(spec["dnsPolicy"], "ClusterFirstWithHostNet") << "Services still resolve";
  EXPECT_EQ(spec["containers"][0]["securityContext"],
            json::parse(R"({"capabilities":{"add":["IPC_LOCK"]},"runAsUser":1000})"));

  r.topology.required = false;
  EXPECT_EQ(job_of(r, c)["spec"]["template"]["metadata"]["annotations"]
                        ["kueue.x-k8s.io/podset-preferred-topology"],
            "cloud.provider.com/topology-block");
  const json plain = job_of(request());
  EXPECT_FALSE(plain["spec"]["template"]["spec"]["containers"][0].contains("securityContext"));
  EXPECT_FALSE(plain["spec"]["template"]["spec"].contains("hostNetwork"));
}

// A job cannot give itself the node: privileged or hostNetwork only where the cluster's own
// settings grant it.
TEST(kube_pod_settings, AJobIsPrivilegedOrOnTheHostNetworkOnlyWhereTheClusterIs) {
  LaunchRequest r = request();
  r.pod.security.privileged = true;
  auto refused = make_launch_plan(r, cluster(), "ml");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::invalid);
  EXPECT_THAT(refused.error().message,
              HasSubstr("cluster 'gke' does not let jobs set security_context.privileged: true"));
  r.pod.security = {};
  r.pod.security.host_network = true;
  EXPECT_THAT(make_launch_plan(r, cluster(), "ml").error().message, HasSubstr("host_network"));
  ClusterSpec open = cluster();
  open.kubernetes.pod.security.host_network = true;
  EXPECT_EQ(job_of(r, open)["spec"]["template"]["spec"]["hostNetwork"], true);
  r.pod.security.host_network = false;  // a job may always give it up
  EXPECT_FALSE(job_of(r, open)["spec"]["template"]["spec"].contains("hostNetwork"));
}

}  // namespace
}  // namespace orch::kube
