#pragma once
// Shared by the tests of the pure half: a Kubernetes JSON fixture from tests/unit/kube/fixtures,
// and an attempt to launch.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "scheduler/model/site_types.h"

namespace orch::kube::testing {

inline std::string fixture(const std::string& relative) {
  std::string path = std::string(ORCH_SOURCE_DIR) + "/tests/unit/kube/fixtures/" + relative;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A one-node attempt of 8 GPUs with a job name, a command and an environment.
inline LaunchRequest request() {
  LaunchRequest r;
  r.token = "orch-12-3-mx325f71";
  r.job_id = 12;
  r.attempt_no = 3;
  r.job_name = "llama-8b pretrain";
  r.command = "exec python3 train.py --config llama-8b.yaml";
  r.env = {{"ORCH_RESUME_FROM", "/ckpt/run1/step-500.pt"}, {"WANDB_MODE", "offline"}};
  r.nodes = 1;
  r.gpus_per_node = 8;
  return r;
}

}  // namespace orch::kube::testing
