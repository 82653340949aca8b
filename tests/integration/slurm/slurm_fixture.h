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

#include "tests/harness/slurm_lab.h"
#include "tests/integration/e2e/job_waits.h"
#include "tests/integration/e2e/server_process.h"

namespace orch::e2e {

using nlohmann::json;

class SlurmE2eTest : public ::testing::Test {
 protected:
  // How long a silent login node keeps its jobs; tests about the grace change it.
  virtual double grace_s() const { return 20; }

  void SetUp() override {
    auto lab = test::SlurmLab::start({"alpha", "beta"});
    ASSERT_TRUE(lab.ok()) << "the Slurm lab did not come up: " << lab.error().message;
    lab_ = std::move(*lab);
    dir_ = std::make_unique<TempDir>();
    state_ = dir_->path() + "/state";
    config_ = dir_->path() + "/clusters.yaml";
    write_file(config_, clusters_yaml());
    start_server();
  }

  void TearDown() override {
    if (server_) server_->stop();
    if (HasFailure()) {
      for (int i = 1; i <= starts_; ++i) {
        std::cerr << "---- server log " << i << ":\n" << read_file(log_path(i)) << "\n";
      }
      for (const char* c : {"alpha", "beta"}) {
        auto q = lab_->slurm(c, {"squeue", "-t", "all", "-o", "%i %j %T %r %N"});
        std::cerr << "---- squeue on " << c << ":\n" << (q ? *q : q.error().message) << "\n";
      }
    }
    server_.reset();
    lab_.reset();  // down.sh: every daemon and job process of the lab
    dir_.reset();
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
           c.host + ", port: " + std::to_string(c.ssh_port) + ", user: " + c.user +
           ", key_file: " + c.key_file + ", known_hosts: " + c.known_hosts +
           ", connect_timeout_s: 2, command_timeout_s: 20}\n";
  }
  std::string clusters_yaml() const {
    return "clusters:\n" + cluster_yaml("alpha") + cluster_yaml("beta");
  }

  std::string log_path(int n) const {
    return dir_->path() + "/server-" + std::to_string(n) + ".log";
  }

  // Starts (or restarts, on the same state dir) the server; `faults` goes to ORCH_FAULTS.
  void start_server(const std::string& faults = "") {
    if (!faults.empty()) setenv("ORCH_FAULTS", faults.c_str(), 1);
    std::string error;
    server_ = ServerProcess::start(config_, state_, log_path(++starts_), error);
    unsetenv("ORCH_FAULTS");
    ASSERT_TRUE(server_) << "orchestrate serve did not start: " << error;
    url_ = server_->url();
  }

  // A toy-trainer job on 1 node x 2 GPUs whose checkpoints go under the site's checkpoint root
  // ($ORCH_CHECKPOINT_ROOT, which differs per cluster), as a job on rented clusters would. It
  // keeps every checkpoint: an attempt that ran on through an outage must not delete the one
  // its replacement resumes from (checkpoint replication and retention are issue 5's).
  static std::string job_yaml(const std::string& name, const std::string& flags,
                              const std::string& more = "") {
    return "name: " + name + "\ncommand: " ORCH_BIN_DIR "/toy_trainer --dim 32 --batch 16 " +
           flags + " --keep-ckpts 0 --ckpt-dir \"$ORCH_CHECKPOINT_ROOT/" + name +
           "\"\n"
           "resources: {nodes: 1, gpus_per_node: 2}\n"
           "model: {parameters: 1024}\n"
           "checkpoint: {interval_steps: 10}\n"
           "restart: {max_infra_restarts: 3, max_user_restarts: 0, backoff: {initial_s: 0.1, "
           "max_s: 1}}\n" +
           more;
  }

  std::int64_t submit(const std::string& yaml) { return submit_job(url_, yaml); }
  json job(std::int64_t id) { return job_json(url_, id); }
  json attempts(std::int64_t id) { return job_list(url_, id, "attempts"); }
  json events(std::int64_t id) { return job_list(url_, id, "events"); }
  static int live_attempts(const json& list) {
    int live = 0;
    for (const auto& a : list) live += a["state"] != "exited" ? 1 : 0;
    return live;
  }

  json wait_job(std::int64_t id, const std::function<bool(const json&)>& done,
                const std::string& what, milliseconds timeout = milliseconds(60000)) {
    return wait_for_job(url_, id, done, what, timeout, milliseconds(100));
  }
  json wait_final(std::int64_t id, milliseconds timeout = milliseconds(90000)) {
    return wait_job(id, is_final, "finish", timeout);
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
  std::unique_ptr<TempDir> dir_;
  std::string state_;
  std::string config_;
  std::unique_ptr<ServerProcess> server_;
  std::string url_;
  int starts_ = 0;
};

}  // namespace orch::e2e
