#pragma once
// Shared by the tests of the pure half: a Kubernetes JSON fixture from tests/unit/kube/fixtures,
// and an attempt to launch.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

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

// The job's own words in a container's command (as written, '$' doubled): after the agent's
// "--" when the job runs under the agent (kubernetes.agent_image, kube_agent_container.h), else
// the whole command.
template <typename Json>
Json job_words(const Json& container) {
  const Json& command = container["command"];
  if (command.empty() || command[0] != "/orchestrate/agent/orchestrate-agent") return command;
  Json out = Json::array();
  bool after = false;
  for (const auto& word : command) {
    if (after) out.push_back(word);
    after = after || word == "--";
  }
  return out;
}

}  // namespace orch::kube::testing
