#pragma once
// The bundled PyTorch probe's figures as a probe line carries them ("torch", agents/README.md,
// "Probe output"): per GPU, dense GEMM TFLOPS and copy bandwidth; per node, the all-reduce bus
// bandwidth between its GPUs. On a node without CUDA the probe measures the CPU (device "cpu",
// one entry, index 0). Read by parse_probe_result, judged by scheduler/health/torch_judge.h.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace orch {

struct TorchGpuReading {
  int index = 0;                   // as nvidia-smi numbers the node's GPUs
  std::string name;                // "NVIDIA H100 80GB HBM3"; "" on CPU
  std::optional<double> tflops;    // dense GEMM, best round (bf16 on CUDA, float32 on CPU)
  std::optional<double> hbm_gb_s;  // device-to-device copy, bytes read + written / s / 1e9
};

struct TorchReading {
  std::string device;  // "cuda" | "cpu"
  std::string dtype;   // "bfloat16" | "float32"
  std::vector<TorchGpuReading> gpus;
  std::optional<double> allreduce_busbw_gb_s;  // nccl-tests' busbw: algbw x 2(n-1)/n
  std::optional<std::int64_t> world;           // processes of the all-reduce
  std::optional<double> seconds;               // the probe script's own run time
};

}  // namespace orch
