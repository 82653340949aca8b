#pragma once
// The GPU parts of a node probe (issue 43) as a round asks for them: what the brain puts in a
// ProbeRequest from the cluster's `burn_in.gpu` (docs/clusters.md) and the agent flags every site
// passes on (agents/README.md, "probe"). Pure.

#include <string>
#include <vector>

namespace orch {

struct GpuProbeOptions {
  std::string nvidia_smi;       // path on the nodes; "": the agent's default (PATH); "none": skip
  int expect_gpus = 0;          // > 0: the gpu-count check against this many GPUs per node
  int dcgm_level = 0;           // dcgmi diag -r LEVEL (1..3); 0: no DCGM diagnostic
  std::string dcgmi = "dcgmi";  // path on the nodes, or a name looked up in PATH
  std::string torch_python;     // interpreter of the bundled torch probe; "": none
  double torch_s = 20;          // its time budget
};

// The agent's probe flags for `o`, after the common ones (--dir, --io-bytes, --compute-s):
// --nvidia-smi, --expect-gpus, --dcgm and --dcgm-level, --torch-python and --torch-s, each only
// when it differs from the agent's default.
std::vector<std::string> gpu_probe_args(const GpuProbeOptions& o);

// A time the round should allow for these options on top of its own: DCGM's diagnostic at
// level 1/2/3 takes about 1.5/3/30 minutes per node, the torch probe its budget.
double gpu_probe_extra_s(const GpuProbeOptions& o);

}  // namespace orch
