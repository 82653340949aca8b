#pragma once
// The fixture of the end-to-end tests: a fresh temp dir with a clusters file (two local sites,
// alpha and beta), a real `orchestrate serve` on it, job specs for the toy trainer, and waits
// that poll the REST API. Teardown stops the server and kills any job process a test left.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/integration/e2e/job_waits.h"
#include "tests/integration/e2e/server_process.h"

namespace orch::e2e {

using nlohmann::json;

inline constexpr const char* kClustersYaml =
    "clusters:\n"
    "  - {name: alpha, provider: local, nodes: 2, gpus_per_node: 2, accelerator: cpu-slot,\n"
    "     unreachable_grace_s: 1, poll_interval_ms: 50}\n"
    "  - {name: beta, provider: local, nodes: 2, gpus_per_node: 2, accelerator: cpu-slot,\n"
    "     unreachable_grace_s: 1, poll_interval_ms: 50}\n";

class E2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>();
    state_ = dir_->path() + "/state";
    config_ = dir_->path() + "/clusters.yaml";
    write_file(config_, kClustersYaml);
    start_server();
  }

  void TearDown() override {
    if (server_) server_->stop();
    if (HasFailure()) {
      for (int i = 1; i <= starts_; ++i) {
        std::cerr << "---- server log " << i << ":\n" << read_file(log_path(i)) << "\n";
      }
    }
    kill_leftover_jobs(state_);
    server_.reset();
    dir_.reset();
  }

  std::string log_path(int n) const {
    return dir_->path() + "/server-" + std::to_string(n) + ".log";
  }

  // Starts (or restarts, on the same state dir) the server; fails the test if it does not come up.
  void start_server() {
    std::string error;
    server_ = ServerProcess::start(config_, state_, log_path(++starts_), error);
    ASSERT_TRUE(server_) << "orchestrate serve did not start: " << error;
    url_ = server_->url();
  }

  // A toy-trainer job: 1 node x 2 slots, d=32, checkpoints in its own dir under the temp dir.
  std::string job_yaml(const std::string& name, const std::string& flags,
                       const std::string& more = "") const {
    const std::string ckpt = dir_->path() + "/ckpt/" + name;
    return "name: " + name + "\ncommand: " ORCH_BIN_DIR "/toy_trainer --dim 32 --batch 16 " +
           flags + " --ckpt-dir " + ckpt +
           "\n"
           "resources: {nodes: 1, gpus_per_node: 2}\n"
           "model: {parameters: 1024}\n"
           "checkpoint: {dir: " +
           ckpt + ", interval_steps: 10}\n" + more;
  }
  static std::string restart_yaml(int user_restarts) {
    return "restart: {max_infra_restarts: 3, max_user_restarts: " + std::to_string(user_restarts) +
           ", backoff: {initial_s: 0.1, max_s: 1}}\n";
  }

  std::int64_t submit(const std::string& yaml) { return submit_job(url_, yaml); }
  json job(std::int64_t id) { return job_json(url_, id); }
  json attempts(std::int64_t id) { return job_list(url_, id, "attempts"); }

  json wait_job(std::int64_t id, const std::function<bool(const json&)>& done,
                const std::string& what, milliseconds timeout = milliseconds(30000)) {
    return wait_for_job(url_, id, done, what, timeout);
  }
  json wait_final(std::int64_t id, milliseconds timeout = milliseconds(30000)) {
    return wait_job(id, is_final, "finish", timeout);
  }
  json wait_step(std::int64_t id, int step) {
    return wait_job(
        id,
        [step](const json& j) {
          return j["state"] == "running" && j["step"].is_number() && j["step"].get<int>() >= step;
        },
        "run past step " + std::to_string(step));
  }

  std::unique_ptr<TempDir> dir_;
  std::string state_;
  std::string config_;
  std::unique_ptr<ServerProcess> server_;
  std::string url_;
  int starts_ = 0;
};

}  // namespace orch::e2e
