#pragma once
// Judging the bundled PyTorch probe's figures (ProbeResult::torch, scheduler/model/
// torch_reading.h) in a burn-in round, pure: each GPU's GEMM TFLOPS and copy bandwidth against
// the median GPU of the round, its TFLOPS against the accelerator's datasheet peak, and each
// node's all-reduce bus bandwidth against the median node. judge_burn_in (burn_in.h) calls it.
//
// Definitions: a median is over every GPU (every node, for the all-reduce) of the round's
// results that passed their checks and ran on the same device ("cuda", or "cpu" where torch had
// no CUDA), and needs at least two values (one has nothing to be compared with). The datasheet
// peak is dense BF16 (scheduler/model/accelerators.h), the dtype of the probe's GEMM on CUDA, so
// it is compared only when the probe ran on CUDA; a CPU's float32 figure has no datasheet here.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/model/probe_result.h"

namespace orch {

struct TorchPolicy {
  double min_tflops_ratio = 0.8;     // a GPU's GEMM TFLOPS / the median GPU's below this fails
  double min_hbm_ratio = 0.8;        // a GPU's copy GB/s / the median GPU's below this fails
  double min_allreduce_ratio = 0.8;  // a node's all-reduce busbw / the median node's
  double min_datasheet_ratio = 0.5;  // a GPU's TFLOPS / the datasheet peak (CUDA only)
  std::optional<double> peak_flops;  // FLOP/s per GPU of the cluster's accelerator; none: no test
};

// The round's medians, by device.
struct TorchMedians {
  std::map<std::string, double> tflops;
  std::map<std::string, double> hbm_gb_s;
  std::map<std::string, double> allreduce_gb_s;
};

// Medians over `results` (the caller passes those whose checks passed).
TorchMedians torch_medians(const std::vector<const ProbeResult*>& results);

struct TorchVerdict {
  // Each names the measurement: "gpu 3: 412 TFLOPS, 58% of the median (710)", "gpu 3: 412
  // TFLOPS, 42% of the datasheet peak (989)", "gpu 5: copy 1480 GB/s, 50% of the median (2950)",
  // "all-reduce busbw: 120 GB/s, 29% of the median (410)"; on CPU "cpu" stands for "gpu N".
  std::vector<std::string> failures;
  // For a node that passed: "torch cuda: 8 GPUs, GEMM 698-712 TFLOPS (median 705), copy
  // 2940-2960 GB/s (median 2950), all-reduce busbw 410 GB/s (median 405)".
  std::string figures;
};

TorchVerdict judge_torch(const TorchReading& reading, const TorchMedians& medians,
                         const TorchPolicy& policy);

}  // namespace orch
