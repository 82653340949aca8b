#pragma once
// The fixture of the Slurm end-to-end tests: a private real-Slurm lab with two clusters (alpha,
// beta; tests/lab/slurm), a clusters file that reaches them as provider slurm over SSH, a real
// `orchestrate serve` on it, and waits that poll the REST API. Every test has its own lab, so
// tests that kill nodes or login nodes run side by side without disturbing each other.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "testkit/slurm_lab.h"
#include "tests/integration/e2e/server_fixture.h"

namespace orch::e2e {

class SlurmE2eTest : public ServerFixture {
 protected:
  // How long a silent login node keeps its jobs; tests about the grace change it.
  virtual double grace_s() const { return 20; }
  // The lab's shape: compute nodes per cluster and Slurm's SlurmdTimeout (0: the lab's 4 s).
  virtual int nodes_per_cluster() const { return 1; }
  virtual int slurmd_timeout_s() const { return 0; }

  void SetUp() override {
    poll_ = milliseconds(100);
    wait_timeout_ = milliseconds(60000);
    final_timeout_ = milliseconds(90000);
    auto lab = test::SlurmLab::start({"alpha", "beta"}, nodes_per_cluster(), slurmd_timeout_s());
    ASSERT_TRUE(lab.ok()) << "the Slurm lab did not come up: " << lab.error().message;
    lab_ = std::move(*lab);
    before_start();
    if (HasFatalFailure()) return;
    start_with(clusters_yaml());
  }
  // What a test prepares once the lab is up, before the server starts.
  virtual void before_start() {}
  // The job finished in its first attempt, on alpha, at last_step: what befell the site on the
  // way (`why` names it, for the failure message) ended nothing.
  void expect_finished_in_one_attempt_on_alpha(std::int64_t id, int last_step,
                                               const std::string& why) {
    json j = wait_final(id);
    ASSERT_FALSE(j.is_null());
    EXPECT_EQ(j["state"], "succeeded") << describe_job(url_, id);
    json list = attempts(id);
    ASSERT_EQ(list.size(), 1u) << why << describe_job(url_, id);
    EXPECT_EQ(list[0]["cluster"], "alpha");
    EXPECT_EQ(list[0]["last_step"], last_step);
  }
  // How the clusters file names the login key of cluster c.
  virtual std::string ssh_key_fields(const test::LabCluster& c) const {
    return "key_file: " + c.key_file;
  }
  void on_failure() override {
    for (const char* c : {"alpha", "beta"}) {
      auto q = lab_->slurm(c, {"squeue", "-t", "all", "-o", "%i %j %T %r %N"});
      std::cerr << "---- squeue on " << c << ":\n" << (q ? *q : q.error().message) << "\n";
    }
  }
  void before_cleanup() override {
    if (server_) server_->stop();
    lab_.reset();  // down.sh: every daemon and job process of the lab
  }

  std::string cluster_yaml(const std::string& name) const {
    const test::LabCluster& c = lab_->cluster(name);
    return "  - name: " + name +
           "\n"
           "    provider: slurm\n"
           "    nodes: " +
           std::to_string(c.nodes.size()) +
           "\n"
           "    gpus_per_node: 8\n"
           "    accelerator: cpu-slot\n"
           "    peak_tflops: 0.001\n"
           "    unreachable_grace_s: " +
           std::to_string(grace_s()) +
           "\n"
           "    poll_interval_ms: 200\n"
           "    storage: {root: " +
           c.storage_root + ", checkpoints: " + c.storage_root +
           "/ckpt}\n"
           "    ssh: {host: " +
           c.host + ", port: " + std::to_string(c.ssh_port) + ", user: " + c.user + ", " +
           ssh_key_fields(c) + ", known_hosts: " + c.known_hosts +
           ", connect_timeout_s: 2, command_timeout_s: 20}\n" + cluster_extra(name);
  }
  // More keys of a cluster's entry (indented by four spaces), for tests that need them.
  virtual std::string cluster_extra(const std::string& name) const {
    (void)name;
    return "";
  }
  std::string clusters_yaml() const {
    return "clusters:\n" + cluster_yaml("alpha") + cluster_yaml("beta");
  }

  // A toy-trainer job on `nodes` nodes x 2 GPUs whose checkpoints go to its own directory at the
  // site ($ORCH_CHECKPOINT_DIR, under a checkpoint root that differs per cluster), as every job's
  // must (issue 37). It keeps every checkpoint: an attempt that ran on through an outage must not
  // delete the one its replacement resumes from (checkpoint replication and retention are issue
  // 5's).
  static std::string job_yaml(const std::string& name, const std::string& flags,
                              const std::string& more = "",
                              const std::string& checkpoint = "{interval_steps: 10}",
                              int nodes = 1) {
    return "name: " + name + "\ncommand: " ORCH_BIN_DIR "/toy_trainer --dim 32 --batch 16 " +
           flags +
           " --keep-ckpts 0 --ckpt-dir \"$ORCH_CHECKPOINT_DIR\"\n"
           "resources: {nodes: " +
           std::to_string(nodes) +
           ", gpus_per_node: 2}\n"
           "model: {parameters: 1024}\n"
           "checkpoint: " +
           checkpoint +
           "\n"
           "restart: {max_infra_restarts: 3, max_user_restarts: 0, backoff: {initial_s: 0.1, "
           "max_s: 1}}\n" +
           more;
  }

  static int live_attempts(const json& list) {
    int live = 0;
    for (const auto& a : list) live += a["state"] != "exited" ? 1 : 0;
    return live;
  }

  json wait_running_on(std::int64_t id, const std::string& cluster, int step) {
    return wait_job(
        id,
        [&](const json& j) {
          return j["state"] == "running" && j["cluster"] == cluster && j["step"].is_number() &&
                 j["step"].get<int>() >= step;
        },
        "run on " + cluster + " past step " + std::to_string(step));
  }

  // Slurm's own view: the jobs carrying this launch token on a cluster ("ID STATE" lines).
  std::vector<std::string> slurm_jobs(const std::string& cluster, const std::string& token) {
    std::vector<std::string> out;
    auto q = lab_->slurm(cluster, {"squeue", "-h", "-t", "all", "--name=" + token, "-o", "%i %T"});
    EXPECT_TRUE(q.ok()) << (q ? "" : q.error().message);
    if (!q) return out;
    std::size_t start = 0;
    while (start < q->size()) {
      std::size_t nl = q->find('\n', start);
      if (nl == std::string::npos) nl = q->size();
      if (nl > start) out.push_back(q->substr(start, nl - start));
      start = nl + 1;
    }
    return out;
  }

  std::unique_ptr<test::SlurmLab> lab_;
};

}  // namespace orch::e2e
