#pragma once
// One GPU as `orchestrate-agent probe` reads it from nvidia-smi and reports it in its line's
// "gpus" (agents/README.md, "Probe output"). Shared by the agent, which fills it from
// nvidia-smi's CSV (agents/nvidia_smi.h), and the scheduler, which reads it back
// (probe_result.h). Header-only and free of libraries: the agent is built apart from the scheduler.

#include <cstdint>
#include <optional>
#include <string>

namespace orch {

struct GpuReading {
  int index = 0;
  std::string name;
  std::string uuid;
  std::optional<double> temperature_c;
  std::optional<double> sm_clock_mhz;
  std::optional<double> max_sm_clock_mhz;
  std::optional<std::int64_t> ecc_uncorrected;  // volatile: since the driver loaded
  std::optional<std::int64_t> ecc_corrected;
  std::optional<std::int64_t> retired_pages_dbe;
  std::optional<bool> retired_pages_pending;
};

}  // namespace orch
