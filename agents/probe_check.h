#pragma once
// One named check of `orchestrate-agent probe` and whether it passed. The names are a contract
// with the scheduler (scheduler/model/probe_result.h): "nvidia-smi", "gpu-count", "gpu-ecc",
// "gpu-retired-pages", "gpu-temperature", "gpu-pcie", "gpu-remapped-rows", "gpu-throttle",
// "gpu-nvlink", "dcgm", "xid", "fs-write", "fs-free", "compute", "torch-probe".

#include <string>

namespace orch::agent {

struct Check {
  std::string name;
  bool ok = true;
  std::string detail;  // what was measured, or what went wrong, for people
};

}  // namespace orch::agent
