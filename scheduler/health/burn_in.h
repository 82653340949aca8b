#pragma once
// Judging a burn-in round, pure: each node against the cluster's median.

#include <string>
#include <vector>

#include "scheduler/health/torch_judge.h"
#include "scheduler/model/probe_result.h"

namespace orch {

struct BurnInPolicy {
  double min_compute_ratio = 0.9;  // GEMM throughput / cluster median below this fails
  double min_io_ratio = 0.9;       // min(write, read) throughput / cluster median below this fails
  TorchPolicy torch;               // the PyTorch probe's figures, per GPU (torch_judge.h)
};

struct NodeProbeVerdict {
  std::string node;
  bool passed = false;
  std::string reason;  // "compute 41% of the cluster median (3.1 vs 7.6 GFLOP/s)", failed checks,
                       // "no probe result"; for a pass, the figures
  double compute_ratio = 0;  // 0 when unknown
  double io_ratio = 0;
};

// One verdict per expected node, in `expected_nodes` order (a node without a result fails; of
// several results for a node the newest counts). A node fails on any failed check, or when its
// compute (gemm_gflops) or its io (the lower of write_mb_s and read_mb_s, whichever it has) is
// below the policy's ratio of the median over the expected nodes whose checks passed. With
// fewer than two such nodes reporting a figure there is nothing to compare it with, so only the
// checks count (a single node). A node that ran the PyTorch probe is also judged per GPU
// (judge_torch, over the medians of the same nodes' GPUs).
std::vector<NodeProbeVerdict> judge_burn_in(const std::vector<std::string>& expected_nodes,
                                            const std::vector<ProbeResult>& results,
                                            const BurnInPolicy& policy);

}  // namespace orch
