#pragma once
// The job the world's tests train: 1 s per step on 2 nodes of 8 H100s at 40% MFU, a save of
// 30 s every 600 steps; mtbf_s the job's own failures (0: none beside its nodes').
#include "simulator/world/sim_world.h"

namespace orch::sim {

inline SimJob llm_job(double mtbf_s = 0) {
  SimJob j;
  j.name = "llm";
  j.flops_per_step = 16 * 989e12 * 0.4;
  j.tokens_per_step = 1000;
  j.total_steps = 1'000'000;
  j.checkpoint_every = 600;
  j.save_s = 30;
  j.mtbf_s = mtbf_s;
  return j;
}

}  // namespace orch::sim
