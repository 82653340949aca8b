#pragma once
// One GPU as `orchestrate-agent probe` reads it from nvidia-smi and reports it in its line's
// "gpus" (agents/README.md, "Probe output"). Shared by the agent, which fills it from
// nvidia-smi's `-q -x` XML (agents/nvidia_smi_xml.h) or its CSV query (agents/nvidia_smi.h), and
// the scheduler, which reads it back (probe_result.h). Header-only and free of libraries: the agent
// is built apart from the scheduler.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
  // From `nvidia-smi -q -x` (agents/nvidia_smi_xml.h); nullopt/empty when not reported.
  std::string pci_bus_id;  // "00000000:3B:00.0"
  std::optional<int> pcie_gen;
  std::optional<int> pcie_gen_max;
  std::optional<int> pcie_width;
  std::optional<int> pcie_width_max;
  std::optional<std::int64_t> ecc_uncorrected_aggregate;  // over the GPU's life
  std::optional<std::int64_t> ecc_corrected_aggregate;
  std::optional<bool> remapped_rows_pending;  // a row remap waits for a GPU reset
  std::optional<bool> remapped_rows_failure;  // a remap failed: the GPU needs service
  // Rows remapped for uncorrectable errors.
  std::optional<std::int64_t> remapped_rows_uncorrectable;
  // Active clock event (throttle) reasons: "hw_slowdown", "hw_thermal", "hw_power_brake",
  // "sw_thermal", "sw_power_cap", "gpu_idle", ...; nullopt when not reported.
  std::optional<std::vector<std::string>> throttle;
  std::optional<double> power_w;
  std::optional<int> nvlinks_down;  // NVLinks reported inactive
};

// One result of DCGM's diagnostic (`dcgmi diag -r N -j`) as the probe reports it in "dcgm".
struct DcgmTestReading {
  std::string name;        // DCGM's test name: "PCIe", "GPU Memory", "software", ...
  std::optional<int> gpu;  // absent for a whole-node test
  std::string result;      // pass | fail | warn | skip
  std::string info;
};

struct DcgmReading {
  int level = 0;  // dcgmi diag -r LEVEL
  std::vector<DcgmTestReading> tests;
};

}  // namespace orch
