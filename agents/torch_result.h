#pragma once
// What the bundled PyTorch probe (agents/torch_probe.py) printed, read back by hand (the agent
// links no JSON library; agents/mini_json.h), and the `torch-probe` check over it. Pure: the
// script's output in, values out, so the parser is a fuzz target (tests/fuzz, torch_probe_line).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/probe_check.h"

namespace orch::agent {

// One GPU's figures (on a CPU-only node: the CPU, as index 0).
struct TorchGpu {
  int index = 0;
  std::string name;                // torch.cuda.get_device_name; "" on CPU
  std::optional<double> tflops;    // dense GEMM, best round (bf16 on CUDA, float32 on CPU)
  std::optional<double> hbm_gb_s;  // device-to-device copy, bytes read + written per second / 1e9
  std::optional<std::int64_t> n;   // the GEMM's matrix size
};

struct TorchReading {
  std::string device;   // "cuda" | "cpu"
  std::string dtype;    // "bfloat16" | "float32"
  std::string version;  // torch.__version__
  std::vector<TorchGpu> gpus;
  std::optional<double> allreduce_busbw_gb_s;  // nccl-tests' busbw over all local GPUs
  std::optional<std::int64_t> allreduce_bytes;
  std::optional<std::int64_t> world;  // processes of the all-reduce (GPUs; 2 on CPU)
  std::optional<double> seconds;      // the script's own run time
  std::string error;                  // what went wrong in the script; "" when nothing did
};

// The script's result from its stdout: the last line that starts with '{' (torch or a library
// may print warnings before it). nullopt with *why when there is none or it is not the shape
// above (a member of the wrong type, a GPU without an index, a number that is not finite).
std::optional<TorchReading> parse_torch_output(std::string_view out, std::string* why);

// "torch-probe": passes when the script reported no error and measured every GPU it saw (and the
// all-reduce when there were two or more processes). Its detail names the figures:
// "cuda bfloat16, 8 GPUs: GEMM 690-712 TFLOPS, copy 2900-2950 GB/s, all-reduce busbw 410 GB/s
// over 8 (torch 2.3.0, 12.3 s)". How fast is fast enough is the scheduler's judgement.
Check torch_check(const TorchReading& reading);

// The median GPU's TFLOPS when the probe ran on CUDA (compute.kind "gpu-gemm"), else nullopt.
std::optional<double> torch_median_gpu_tflops(const TorchReading& reading);

}  // namespace orch::agent
