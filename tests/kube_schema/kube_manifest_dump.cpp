// kube_manifest_dump DIR: writes every object the Kubernetes adapter sends to an API server,
// built by the adapter's own builders (make_launch_plan, the Secret's owner patch, the storage
// helper and probe pods, the DELETE body), one JSON file per object in DIR, for validate.mjs to
// check against Kubernetes' schemas. The cases cover every branch of the builders that adds
// fields: one pod and a gang (Indexed Job, headless Service, anti-affinity), secret_env (its
// Secret, and the Secret as the owner patch leaves it), every pod setting of a cluster and of a
// job (annotations, labels and securityContext included), Kueue and its topology, excluded and
// pinned nodes, code and setup, no GPUs, with and without the agent, pushing home. A builder
// that refuses a case is a failure too (exit 1, naming the case and why).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "adapters/kubernetes/kube_helper_pod.h"
#include "adapters/kubernetes/kube_manifest.h"
#include "adapters/kubernetes/kube_secret.h"
#include "scheduler/model/workdir.h"
#include "tests/unit/kube/fixture.h"

namespace orch::kube {
namespace {

using nlohmann::json;

// Where the manifests go, and whether every case could be built and written.
class Dump {
 public:
  explicit Dump(std::filesystem::path dir) : dir_(std::move(dir)) {}

  void write(const std::string& file, const std::string& body) {
    json doc = json::parse(body, nullptr, false);
    if (doc.is_discarded()) return fail(file, "the builder wrote text that is not JSON");
    std::ofstream out(dir_ / file, std::ios::binary);
    out << doc.dump(2) << "\n";
    if (!out.flush()) return fail(file, "cannot write " + (dir_ / file).string());
    ++written_;
  }

  // The plan's Job, and its Service and Secret where it has them. The files are named
  // <name>.job.json, <name>.service.json, <name>.secret.json.
  void plan(const std::string& name, const Result<KubeLaunchPlan>& plan) {
    if (!plan.ok()) return fail(name, "make_launch_plan refused it: " + plan.error().message);
    write(name + ".job.json", plan->job_body);
    if (!plan->service_body.empty()) write(name + ".service.json", plan->service_body);
    if (!plan->secret_body.empty()) write(name + ".secret.json", plan->secret_body);
  }

  void fail(const std::string& what, const std::string& why) {
    std::cerr << "kube_manifest_dump: " << what << ": " << why << "\n";
    ok_ = false;
  }

  bool ok() const { return ok_; }
  int written() const { return written_; }

 private:
  std::filesystem::path dir_;
  int written_ = 0;
  bool ok_ = true;
};

ClusterSpec plain_cluster() {
  ClusterSpec c;
  c.name = "kube-east";
  c.provider = "kubernetes";
  c.storage_root = "/mnt/shared/orch";
  c.kubernetes.pod.image = "nvcr.io/nvidia/pytorch:24.05-py3";
  c.kubernetes.termination_grace_s = 180;
  return c;
}

// Every pod setting a cluster can have (kube_pod_settings.h), Kueue, a helper image.
ClusterSpec full_cluster() {
  ClusterSpec c = plain_cluster();
  PodSettings& p = c.kubernetes.pod;
  p.image_pull_secrets = {"ngc", "ghcr"};
  p.service_account = "trainer";
  p.shm_size = "64Gi";
  p.node_selector = {{"cloud.google.com/gke-accelerator", "nvidia-h100-80gb"}};
  p.tolerations = {{"cloud.google.com/gke-spot", "Equal", "true", "NoSchedule"},
                   {"dedicated", "Exists", "", ""},
                   {"node.kubernetes.io/unreachable", "Exists", "", "NoExecute"}};
  p.extra_resources = {{"rdma/ib", "1"}, {"hugepages-2Mi", "1Gi"}};
  p.priority_class = "training-high";
  p.volumes = {{"shared", "orch-data", "", "/mnt/shared", false},
               {"nvme", "", "/mnt/nvme", "/scratch", false}};
  c.kubernetes.allow_host_path = true;
  c.kubernetes.queue = "team-a";
  c.kubernetes.helper_image = "busybox:stable";
  c.kubernetes.agent = "/opt/orchestrate/orchestrate-agent";
  c.kubernetes.gpu_resource = "amd.com/gpu";
  p.annotations = {{"k8s.v1.cni.cncf.io/networks", "rdma-net-ipvlan"}};
  p.labels = {{"team", "ml"}};
  p.security.capabilities_add = {"IPC_LOCK", "SYS_RESOURCE"};
  p.security.privileged = false;
  p.security.run_as_user = 1000;
  p.security.run_as_group = 1000;
  p.security.host_network = true;
  return c;
}

// The unit tests' attempt (tests/unit/kube/fixture.h), with a checkpoint directory and a '$'.
LaunchRequest plain_request() {
  LaunchRequest r = testing::request();
  r.command += " --lr $LR";
  r.env["LR"] = "3e-4";
  r.checkpoint_dir = "/mnt/shared/orch/checkpoints/job-12";
  return r;
}

LaunchRequest gang_request() {
  LaunchRequest r = plain_request();
  r.token = "0rch-13-1-gang";  // a leading digit: the Service's name gets a prefix
  r.nodes = 4;
  // A node name that is no label value (too long) is excluded by matchFields only.
  r.exclude_nodes = {"gpu-node-7",
                     "ip-10-0-0-7.eu-west-1.compute.internal.a-very-long-domain.example"};
  return r;
}

LaunchRequest secret_request() {
  LaunchRequest r = plain_request();
  r.secret_refs = {{"WANDB_API_KEY", "wandb"}, {"HF_TOKEN", "hf"}};
  r.secret_env = {{"WANDB_API_KEY", "0123456789abcdef"}, {"HF_TOKEN", "hf_$(HOME)\xc3\xa9"}};
  r.env["HF_TOKEN"] = "overridden by the secret";
  return r;
}

// A job with its own pod settings over full_cluster's, and everything else a request can ask.
LaunchRequest settings_request() {
  LaunchRequest r = plain_request();
  r.pod.image = "ghcr.io/team/trainer:7";
  r.pod.shm_size = "128Gi";
  r.pod.service_account = "job-account";
  r.pod.priority_class = "training-low";
  r.pod.node_selector = {{"pool", "a"}};
  r.pod.tolerations = {{"team", "Equal", "ml", "PreferNoSchedule"}};
  r.pod.extra_resources = {{"rdma/ib", "2"}};
  r.pod.image_pull_secrets = {"team-registry"};
  r.pod.volumes = {{"datasets", "datasets", "", "/data", true},
                   {"local", "", "/mnt/local", "/local", false}};
  r.time_limit_s = 7200;
  r.cpus_per_task = 16;
  r.memory_mb = 256 * 1024;
  r.container.workdir = "/workspace";
  r.exclude_nodes = {"gpu-node-3"};
  r.pod.annotations = {{"example.com/sweep", "lr"}};
  r.pod.labels = {{"experiment", "lr-sweep"}};
  r.pod.security.capabilities_add = {"NET_ADMIN"};
  r.pod.security.run_as_user = 2000;
  r.pod.security.host_network = false;
  r.topology.level = "cloud.provider.com/topology-block";
  r.topology.required = true;
  return r;
}

LaunchRequest pinned_request() {
  LaunchRequest r = gang_request();
  r.token = "orch-14-2-pinned";
  r.on_node = "gpu-node-1";
  r.include_nodes = {"gpu-node-2", "gpu-node-1"};
  return r;
}

LaunchRequest code_request(const ClusterSpec& c) {
  LaunchRequest r = plain_request();
  r.token = "orch-15-1-code";
  const std::string hash(64, 'c');
  r.code_sha256 = hash;
  r.code_archive = code_archive_path(c.storage_root, hash);
  r.workdir = code_tree_path(c.storage_root, hash);
  r.env["ORCH_WORKDIR"] = r.workdir;
  r.setup = "python -m venv .venv && pip install -r requirements.txt";
  r.setup_per_node = true;
  r.setup_key = setup_key(c.name, hash, r.setup, "");
  r.setup_dir = setup_dir_path(c.storage_root, r.setup_key);
  return r;
}

ClusterSpec code_cluster() {
  ClusterSpec c = plain_cluster();
  c.kubernetes.pod.volumes = {{"shared", "orch-data", "", "/mnt/shared", false}};
  return c;
}

void launches(Dump& d) {
  d.plan("single", make_launch_plan(plain_request(), plain_cluster(), "ml"));
  LaunchRequest cpu = plain_request();
  cpu.gpus_per_node = 0;
  cpu.job_name.clear();
  cpu.checkpoint_dir.clear();
  d.plan("no-gpus", make_launch_plan(cpu, plain_cluster(), "default"));
  d.plan("gang", make_launch_plan(gang_request(), plain_cluster(), "ml"));
  d.plan("secret-env", make_launch_plan(secret_request(), plain_cluster(), "ml"));
  d.plan("pod-settings", make_launch_plan(settings_request(), full_cluster(), "ml"));
  LaunchRequest gang_settings = settings_request();
  gang_settings.nodes = 2;
  gang_settings.topology.required = false;          // Kueue's preferred topology
  gang_settings.pod.security.host_network.reset();  // the cluster's hostNetwork: true
  d.plan("pod-settings-gang", make_launch_plan(gang_settings, full_cluster(), "ml"));
  d.plan("pinned", make_launch_plan(pinned_request(), plain_cluster(), "ml"));
  d.plan("code-setup", make_launch_plan(code_request(code_cluster()), code_cluster(), "ml"));
  ClusterSpec no_agent = plain_cluster();
  no_agent.kubernetes.agent_image = "none";
  d.plan("no-agent", make_launch_plan(plain_request(), no_agent, "ml"));
}

// The agent pushing its records home (kube_manifest.h's PushLaunch): the push variables, the
// credential by secretKeyRef, and the Secret made even without secret_env.
void pushing(Dump& d) {
  PushLaunch push;
  push.url = "https://orch.example.com:8443";
  push.ca_pem =
      "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ0==\n-----END CERTIFICATE-----\n";
  push.credential = "orch_att_" + std::string(64, 'f');
  d.plan("push", make_launch_plan(plain_request(), plain_cluster(), "ml", &push));
  LaunchRequest gang = secret_request();
  gang.nodes = 2;
  d.plan("push-gang-secret-env", make_launch_plan(gang, full_cluster(), "ml", &push));
}

// The Secret as the owner patch (a JSON merge patch) leaves it: the patch itself is no object,
// the merged result is what the API server keeps.
void patched_secret(Dump& d) {
  auto plan = make_launch_plan(secret_request(), plain_cluster(), "ml");
  if (!plan.ok() || plan->secret_body.empty()) return d.fail("secret-owner-patched", "no Secret");
  const std::string uid = "8d5e1c7a-2b3f-4e6d-9a0b-1c2d3e4f5a6b";
  json secret = json::parse(plan->secret_body);
  secret.merge_patch(json::parse(secret_owner_patch(plan->job_name, uid, &plan->secret_values)));
  d.write("secret-owner-patched.secret.json", secret.dump());
  json adopted = json::parse(plan->secret_body);
  adopted.merge_patch(json::parse(secret_owner_patch(plan->job_name, uid)));
  d.write("secret-owner-adopted.secret.json", adopted.dump());
}

void helper_pods(Dump& d) {
  for (const auto& [name, cluster] : std::vector<std::pair<std::string, ClusterSpec>>{
           {"plain", plain_cluster()}, {"full", full_cluster()}}) {
    auto storage = storage_helper_body(cluster, "ml");
    if (!storage.ok()) {
      d.fail("storage-helper-" + name, storage.error().message);
    } else {
      d.write("storage-helper-" + name + ".pod.json", *storage);
    }
    ProbeRequest probe;
    probe.token = "orch-burnin-kube-east-1a";
    probe.io_bytes = 1 << 20;
    probe.compute_s = 1.5;
    probe.timeout_s = 120;
    for (int gpus : {8, 0}) {
      auto pods = probe_pods(cluster, "ml", probe, {"gpu-node-1", "gpu-node-2"}, "/ckpt", gpus);
      const std::string label = "probe-" + name + "-" + std::to_string(gpus) + "gpus";
      if (!pods.ok()) {
        d.fail(label, pods.error().message);
        continue;
      }
      for (std::size_t i = 0; i < pods->size(); ++i) {
        d.write(label + "-" + std::to_string(i) + ".pod.json", (*pods)[i].body);
      }
    }
  }
}

}  // namespace
}  // namespace orch::kube

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: kube_manifest_dump DIR\n";
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(argv[1], ec);
  if (ec) {
    std::cerr << "kube_manifest_dump: cannot make " << argv[1] << ": " << ec.message() << "\n";
    return 1;
  }
  orch::kube::Dump dump(argv[1]);
  orch::kube::launches(dump);
  orch::kube::pushing(dump);
  orch::kube::patched_secret(dump);
  orch::kube::helper_pods(dump);
  dump.write("delete-background.deleteoptions.json", orch::kube::delete_background_body());
  std::cout << "kube_manifest_dump: " << dump.written() << " manifests in " << argv[1] << "\n";
  return dump.ok() ? 0 : 1;
}
