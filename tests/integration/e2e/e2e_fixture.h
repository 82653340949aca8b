#pragma once
// The fixture of the end-to-end tests with local sites: two of them (alpha and beta) in the
// clusters file, job specs for the toy trainer; teardown kills any job process a test left.

#include <string>

#include "testkit/job_user.h"
#include "tests/integration/e2e/server_fixture.h"

namespace orch::e2e {

// Two local sites, alpha and beta, of `nodes` virtual nodes with `gpus_per_node` slots each.
inline std::string local_clusters_yaml(int nodes, int gpus_per_node) {
  std::string out = "clusters:\n";
  for (const char* name : {"alpha", "beta"}) {
    out += std::string("  - {name: ") + name +
           ", provider: local, nodes: " + std::to_string(nodes) +
           ", gpus_per_node: " + std::to_string(gpus_per_node) +
           ", accelerator: cpu-slot,\n     unreachable_grace_s: 1, poll_interval_ms: 50" +
           testkit::local_run_as_yaml() + "}\n";
  }
  return out;
}

class E2eTest : public ServerFixture {
 protected:
  void SetUp() override { start_with(local_clusters_yaml(2, 2)); }
  void before_cleanup() override { kill_leftover_jobs(state_); }

  // A toy-trainer job: 1 node x 2 slots, d=32, checkpoints in the job's own directory at its
  // site ($ORCH_CHECKPOINT_DIR, made by the site before the job starts).
  std::string job_yaml(const std::string& name, const std::string& flags,
                       const std::string& more = "") const {
    return "name: " + name + "\ncommand: " + testkit::job_bin_dir() +
           "/toy_trainer --dim 32 --batch 16 " + flags +
           " --ckpt-dir \"$ORCH_CHECKPOINT_DIR\"\n"
           "resources: {nodes: 1, gpus_per_node: 2}\n"
           "model: {parameters: 1024}\n"
           "checkpoint: {interval_steps: 10}\n" +
           more;
  }
  static std::string restart_yaml(int user_restarts) {
    return "restart: {max_infra_restarts: 3, max_user_restarts: " + std::to_string(user_restarts) +
           ", backoff: {initial_s: 0.1, max_s: 1}}\n";
  }

  json wait_step(std::int64_t id, int step) {
    return wait_job(
        id,
        [step](const json& j) {
          return j["state"] == "running" && j["step"].is_number() && j["step"].get<int>() >= step;
        },
        "run past step " + std::to_string(step));
  }
};

}  // namespace orch::e2e
