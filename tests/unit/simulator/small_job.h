#pragma once
// The job the simulator's unit tests run: 8 nodes of a 1e9-parameter model, a checkpoint every
// 3000 steps (20 s to save, 10 GB), as a scenario's `job:` section.

namespace orch::sim {

inline constexpr const char* kSmallJob = R"(job:
  name: small
  nodes: 8
  gpus_per_node: 8
  parameters: 1e9
  tokens_per_step: 1048576
  checkpoint_every: 3000
  save_s: 20
  checkpoint_gb: 10
)";

}  // namespace orch::sim
