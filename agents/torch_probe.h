#pragma once
// The bundled PyTorch probe: `orchestrate-agent probe --torch-python PATH` writes the script
// agents/torch_probe.py (embedded in the binary at build time, torch_probe_script.h) to a
// private temporary file, runs it with that interpreter and a deadline, and reads its one JSON
// line back (torch_result.h): per-GPU GEMM TFLOPS and copy bandwidth, the all-reduce bus
// bandwidth between the node's GPUs, or the same on the CPU where torch has no CUDA.

#include <optional>
#include <string>

#include "agents/json_writer.h"
#include "agents/probe_check.h"
#include "agents/torch_result.h"

namespace orch::agent {

// Seconds the interpreter is given beyond --torch-s: Python starts and imports torch, once in
// the probe and once in each of its per-GPU processes, before the measuring begins.
inline constexpr double kTorchStartupGraceS = 60;

struct TorchProbe {
  std::optional<TorchReading> reading;  // absent when the script gave no result line
  Check check;                          // "torch-probe"
};

// Runs the script with `python` (a path, or a name looked up in PATH) for about `seconds`; it
// and every process it started are killed after seconds + grace_s.
TorchProbe run_torch_probe(const std::string& python, double seconds,
                           double grace_s = kTorchStartupGraceS);

// Whether `flag` is one of the torch probe's flags (--torch-python, --torch-s), and its value
// into *python / *seconds; false when the value is not good (an empty path; seconds not in
// (0, 3600]).
bool is_torch_flag(const std::string& flag);
bool parse_torch_flag(const std::string& flag, const std::string& value, std::string* python,
                      double* seconds);

// The probe line's "torch" member (agents/README.md, "Probe output").
void write_torch(JsonWriter& w, const TorchReading& reading);

}  // namespace orch::agent
