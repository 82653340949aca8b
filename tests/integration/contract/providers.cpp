#include "tests/integration/contract/providers.h"

#include <signal.h>
#include <stdlib.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <utility>

#include "adapters/kubernetes/kube_config.h"
#include "adapters/kubernetes/kube_manifest.h"
#include "adapters/kubernetes/kube_site.h"
#include "adapters/local/local_site.h"
#include "adapters/slurm/slurm_site.h"
#include "adapters/ssh/ssh_session.h"
#include "scheduler/common/percent_encoding.h"
#include "testkit/fake_kube/fake_kube_server.h"
#include "testkit/fake_kube/kube_test_client.h"
#include "testkit/fake_kube/test_pki.h"
#include "testkit/job_user.h"
#include "testkit/slurm_lab.h"

namespace orch::contract {
namespace {

std::string make_temp_dir(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (mkdtemp(tmpl.data()) == nullptr) return "";
  return tmpl;
}

void remove_dir(std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  dir.clear();
}

// ---- local ----------------------------------------------------------------------------------

struct LocalWorld {
  std::string root;
  std::string error;
};
LocalWorld& local_world() {
  static LocalWorld w;
  return w;
}

// ---- Slurm ----------------------------------------------------------------------------------

constexpr const char* kSlurmCluster = "alpha";

struct SlurmWorld {
  std::unique_ptr<test::SlurmLab> lab;
  std::string error;
};
SlurmWorld& slurm_world() {
  static SlurmWorld w;
  return w;
}

// ---- Kubernetes -----------------------------------------------------------------------------

struct KubeWorld {
  std::string dir;
  fake_kube::TestPki pki;
  std::string token;
  std::string kubeconfig;
  std::unique_ptr<fake_kube::FakeKubeServer> server;
  std::string error;

  fake_kube::KubeReply request(const std::string& method, const std::string& target) const {
    return fake_kube::kube_request({"127.0.0.1", server->port(), pki.ca_cert, token}, method,
                                   target);
  }
};
KubeWorld& kube_world() {
  static KubeWorld w;
  return w;
}

}  // namespace

// ---- local ----------------------------------------------------------------------------------

void LocalProvider::start() {
  LocalWorld& w = local_world();
  w.error.clear();
  w.root = make_temp_dir("orch-contract-local");
  if (w.root.empty()) w.error = "cannot create a temporary directory for the local site";
}

void LocalProvider::stop() {
  remove_dir(local_world().root);
}

const std::string& LocalProvider::start_error() {
  return local_world().error;
}

std::unique_ptr<ClusterPort> LocalProvider::make_site() {
  LocalSiteOptions o;
  o.name = "local";
  o.root = local_world().root;
  o.nodes = 2;
  o.gpus_per_node = 8;
  o.agent_path = ORCH_BIN_DIR "/orchestrate-agent";
  o.cancel_grace_ms = 2'000;
  // As root, the contract holds with the jobs' processes run as an unprivileged user.
  o.run_as = testkit::job_user();
  return std::make_unique<LocalSite>(o);
}

Result<void> LocalProvider::fail_node(const LaunchResult& launch, const RunObservation& running) {
  (void)running;
  int pgid = 0;
  try {
    pgid = std::stoi(launch.site_job_id);
  } catch (const std::exception&) {
    return make_error(ErrorKind::invalid, "local site_job_id is not a pid: " + launch.site_job_id);
  }
  if (pgid <= 1) return make_error(ErrorKind::invalid, "bad process group " + launch.site_job_id);
  if (kill(-pgid, SIGKILL) != 0) {
    return make_error(ErrorKind::io, "kill(-" + launch.site_job_id + ", SIGKILL) failed");
  }
  return Ok{};
}

void LocalProvider::heal(const RunObservation& running) {
  (void)running;  // a killed process group leaves nothing to repair
}

Result<int> LocalProvider::site_jobs(const std::string& token) {
  // One run directory per launch; a second agent would have to share it, so count agent starts
  // in the run's events instead: every agent writes one "start" event.
  const std::string events = local_world().root + "/runs/" + token + "/events.jsonl";
  std::FILE* f = std::fopen(events.c_str(), "r");
  if (f == nullptr) return make_error(ErrorKind::io, "cannot read " + events);
  int starts = 0;
  char line[4096];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::string(line).find("\"start\"") != std::string::npos) ++starts;
  }
  std::fclose(f);
  return starts;
}

void LocalProvider::cleanup(const std::string& token, const LaunchResult& launch) {
  (void)token;
  try {
    const int pgid = std::stoi(launch.site_job_id);
    if (pgid > 1) kill(-pgid, SIGKILL);
  } catch (const std::exception&) {
  }
}

// ---- Slurm ----------------------------------------------------------------------------------

void SlurmProvider::start() {
  SlurmWorld& w = slurm_world();
  w.error.clear();
  auto lab = test::SlurmLab::start({kSlurmCluster});
  if (!lab) {
    w.error = "the Slurm lab did not come up: " + lab.error().message;
    return;
  }
  w.lab = std::move(*lab);
}

void SlurmProvider::stop() {
  slurm_world().lab.reset();
}

const std::string& SlurmProvider::start_error() {
  return slurm_world().error;
}

std::unique_ptr<ClusterPort> SlurmProvider::make_site() {
  ClusterSpec spec = slurm_world().lab->cluster_spec(kSlurmCluster);
  spec.ssh.connect_timeout_s = 5;
  spec.ssh.command_timeout_s = 20;
  auto ssh = std::make_unique<SshSession>(spec.name, spec.ssh);
  return std::make_unique<SlurmSite>(spec, std::move(ssh));
}

Result<void> SlurmProvider::fail_node(const LaunchResult& launch, const RunObservation& running) {
  (void)launch;
  if (running.nodes.empty()) return make_error(ErrorKind::invalid, "the run reports no node");
  return slurm_world().lab->set_node_down(kSlurmCluster, running.nodes.front(),
                                          "orchestrate contract test");
}

void SlurmProvider::heal(const RunObservation& running) {
  for (const std::string& node : running.nodes) {
    (void)slurm_world().lab->resume_node(kSlurmCluster, node);
  }
}

Result<int> SlurmProvider::site_jobs(const std::string& token) {
  auto q = slurm_world().lab->slurm(kSlurmCluster,
                                    {"squeue", "-h", "-t", "all", "--name=" + token, "-o", "%i"});
  if (!q) return q.error();
  int jobs = 0;
  for (char c : *q) jobs += c == '\n' ? 1 : 0;
  return jobs;
}

void SlurmProvider::cleanup(const std::string& token, const LaunchResult& launch) {
  (void)launch;
  (void)slurm_world().lab->slurm(kSlurmCluster, {"scancel", "--name=" + token});
}

// ---- Kubernetes -----------------------------------------------------------------------------

void KubeProvider::start() {
  KubeWorld& w = kube_world();
  w.error.clear();
  w.dir = make_temp_dir("orch-contract-kube");
  if (w.dir.empty()) {
    w.error = "cannot create a temporary directory for the fake API server";
    return;
  }
  try {
    w.pki = fake_kube::make_test_pki(w.dir);
    w.token = fake_kube::random_token();
    fake_kube::FakeKubeOptions o;
    o.cert_file = w.pki.server_cert;
    o.key_file = w.pki.server_key;
    o.token = w.token;
    o.cluster.state_dir = w.dir + "/fake";
    o.cluster.nodes = fake_kube::uniform_nodes(2, 8);
    w.server = std::make_unique<fake_kube::FakeKubeServer>(o);
    w.server->start();
    w.kubeconfig = w.dir + "/kubeconfig";
    fake_kube::write_kubeconfig(w.kubeconfig, {w.server->url(), w.pki.ca_cert, w.token});
  } catch (const std::exception& e) {
    w.error = std::string("the fake API server did not come up: ") + e.what();
  }
}

void KubeProvider::stop() {
  KubeWorld& w = kube_world();
  if (w.server) w.server->stop();
  w.server.reset();
  remove_dir(w.dir);
}

const std::string& KubeProvider::start_error() {
  return kube_world().error;
}

std::unique_ptr<ClusterPort> KubeProvider::make_site() {
  const KubeWorld& w = kube_world();
  ClusterSpec spec;
  spec.name = "kube";
  spec.provider = "kubernetes";
  spec.nodes = 2;
  spec.gpus_per_node = 8;
  spec.poll_interval_ms = 100;
  spec.kubernetes.kubeconfig = w.kubeconfig;
  spec.kubernetes.pod.image = "fake/contract";
  spec.kubernetes.termination_grace_s = 2;
  auto target = load_kube_target(w.kubeconfig, "", "");
  if (!target) return nullptr;
  return std::make_unique<KubernetesSite>(spec, std::move(*target));
}

Result<void> KubeProvider::fail_node(const LaunchResult& launch, const RunObservation& running) {
  (void)launch;
  if (running.nodes.empty()) return make_error(ErrorKind::invalid, "the run reports no node");
  fake_kube::KubeReply r =
      kube_world().request("POST", "/fake/nodes/" + running.nodes.front() + "/notready");
  if (r.status != 200) {
    return make_error(ErrorKind::io, "notready hook answered " + std::to_string(r.status) + ": " +
                                         r.body + r.error);
  }
  return Ok{};
}

void KubeProvider::heal(const RunObservation& running) {
  for (const std::string& node : running.nodes) {
    (void)kube_world().request("POST", "/fake/nodes/" + node + "/ready");
  }
}

Result<int> KubeProvider::site_jobs(const std::string& token) {
  fake_kube::KubeReply r = kube_world().request(
      "GET", kube::jobs_path("default") +
                 "?labelSelector=" + percent_encode(kube::token_label_selector(token)));
  if (r.status != 200) {
    return make_error(ErrorKind::io, "listing jobs answered " + std::to_string(r.status) + ": " +
                                         r.body + r.error);
  }
  return static_cast<int>(r.json()["items"].size());
}

void KubeProvider::cleanup(const std::string& token, const LaunchResult& launch) {
  (void)launch;
  (void)kube_world().request("DELETE", kube::jobs_path("default") + "/" +
                                           kube::job_name_for_token(token) +
                                           "?propagationPolicy=Background&gracePeriodSeconds=0");
}

}  // namespace orch::contract
