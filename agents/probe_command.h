#pragma once
// `orchestrate-agent probe`: checks one node (GPUs through nvidia-smi, Xid events in the kernel
// log, a filesystem's throughput and free space, CPU compute) and prints the result as one line
// of JSON on stdout. The schema is in agents/README.md ("Probe output"); the scheduler reads it
// with parse_probe_result (scheduler/model/probe_result.h).

#include <cstdint>
#include <string>
#include <vector>

namespace orch::agent {

struct ProbeOptions {
  std::string node;                    // default: $SLURMD_NODENAME, $ORCH_NODE_NAME, hostname
  std::string dir = ".";               // the filesystem to probe
  std::int64_t io_bytes = 64ll << 20;  // written and read back; 0 skips the throughput test
  double compute_s = 1.0;              // CPU GEMM time; 0 skips it
  std::string nvidia_smi;              // "": look in PATH; "none": skip the GPU checks
  std::string kernel_log;              // "": /dev/kmsg
  std::int64_t min_free_bytes = 256ll << 20;
  double max_gpu_temp_c = 85;
  double nvidia_smi_timeout_s = 30;   // a lost GPU can make nvidia-smi hang
  std::string torch_python = "none";  // the interpreter of the bundled torch probe; "none": skip
  double torch_s = 20;                // the torch probe's time budget (torch_probe.h)
  int expect_gpus = 0;                // > 0: the gpu-count check against this
  std::string dcgm = "none";          // dcgmi's path ("" = in PATH); "none": no DCGM diagnostic
  int dcgm_level = 2;                 // dcgmi diag -r LEVEL (1..3)
  double dcgm_timeout_s = 0;          // 0: by level (300, 900, 3600 s)
};

// Parses the words after `probe`. On failure returns false and sets *error to a usage message.
bool parse_probe_options(const std::vector<std::string>& args, ProbeOptions* options,
                         std::string* error);

// Runs every check and returns the JSON line (no newline).
std::string run_probe(const ProbeOptions& options);

// Prints run_probe's line; the exit status is 0 whenever the probe ran, whatever it found.
int probe_command(const ProbeOptions& options);

}  // namespace orch::agent
