#pragma once
// What the batch-script tests share: this build's agent as the script runs it, the environment
// slurmd gives a batch script (with the srun stand-in first on PATH), a plain request and
// cluster, and the argv a submit command hands to sbatch, read back through a real shell.

#include <gmock/gmock.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "adapters/slurm/batch_script.h"
#include "tests/unit/slurm/process_test_util.h"

namespace orch::slurm::batch_fixture {

inline const std::string kAgent = ORCH_BIN_DIR "/orchestrate-agent";

inline Result<BatchPlan> plan_of(const LaunchRequest& r, const ClusterSpec& c) {
  return make_batch_plan(r, c, kAgent);
}

// SLURM_JOB_ID and a PATH whose first entry holds the srun stand-in (stand_in_bin/).
inline std::vector<std::pair<std::string, std::string>> slurmd_env(const std::string& job_id) {
  const char* path = std::getenv("PATH");
  return {{"SLURM_JOB_ID", job_id},
          {"PATH", std::string(ORCH_SOURCE_DIR "/tests/unit/slurm/stand_in_bin:") +
                       (path ? path : "/usr/bin:/bin")}};
}

inline LaunchRequest basic_request() {
  LaunchRequest r;
  r.token = "orch-7-2-5f3a9c";
  r.job_id = 7;
  r.attempt_no = 2;
  r.job_name = "pretrain";
  r.command = "python train.py";
  r.nodes = 2;
  r.gpus_per_node = 8;
  return r;
}

inline ClusterSpec basic_cluster(const std::string& root = "/shared/orch") {
  ClusterSpec c;
  c.name = "alpha";
  c.provider = "slurm";
  c.storage_root = root;
  return c;
}

// The argv the submit command hands to `sbatch`, read back through a real shell.
inline std::vector<std::string> sbatch_argv_of(const std::string& submit_command,
                                               const std::string& shell = "/bin/sh") {
  const std::string script = "sbatch() { printf '%s\\0' sbatch \"$@\"; }\n" + submit_command + "\n";
  Outcome r = run({shell, "-c", script});
  EXPECT_EQ(r.status, 0) << submit_command;
  std::vector<std::string> argv;
  std::size_t start = 0;
  for (std::size_t i = 0; i < r.out.size(); ++i) {
    if (r.out[i] == '\0') {
      argv.push_back(r.out.substr(start, i - start));
      start = i + 1;
    }
  }
  return argv;
}

}  // namespace orch::slurm::batch_fixture
