#pragma once
// What `orchestrate-agent probe` prints about one node: one JSON object on one line (schema in
// agents/README.md, "Probe output"). The agent writes it; adapters parse it with
// parse_probe_result and hand it to the brain, which stores it and judges it (scheduler/health).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/model/gpu_reading.h"
#include "scheduler/model/torch_reading.h"

namespace orch {

// One named check and whether it passed (names in agents/probe_check.h: "nvidia-smi",
// "gpu-count", "gpu-ecc", "gpu-pcie", "dcgm", "xid", "fs-write", "compute", ...).
struct ProbeCheck {
  std::string name;
  bool ok = true;
  std::string detail;  // what was measured or what went wrong, for people
};

struct ProbeResult {
  std::string node;      // the node name as the site knows it (Slurm: SLURMD_NODENAME)
  std::string hostname;  // gethostname() on the node
  std::int64_t at_ms = 0;
  bool ok = true;  // every check passed
  std::vector<ProbeCheck> checks;
  std::optional<double> gemm_gflops;  // compute throughput (GPU when present, else CPU GEMM)
  std::string compute_kind;           // "cpu-gemm" | "gpu-gemm"
  std::optional<double> write_mb_s;   // filesystem throughput of the probed directory
  std::optional<double> read_mb_s;
  std::optional<std::int64_t> free_bytes;
  std::string dir;
  std::vector<GpuReading> gpus;
  std::vector<std::string> xid_lines;  // kernel log lines with NVRM Xid events
  std::optional<int> gpu_count;        // GPUs nvidia-smi listed (absent when it did not run)
  std::optional<DcgmReading> dcgm;     // DCGM's diagnostic, when it ran
  std::optional<TorchReading> torch;   // the bundled PyTorch probe's figures, when it ran
  std::string raw;                     // the line as printed, kept for the store
};

// One probe line (JSON). Errors name the field that is missing or wrong.
Result<ProbeResult> parse_probe_result(std::string_view line);

// Every probe line among a command's output lines (lines that do not start with '{' are
// skipped; a line that starts with '{' and does not parse is an error naming the line).
Result<std::vector<ProbeResult>> parse_probe_output(std::string_view output);

}  // namespace orch
