#pragma once
// The probe's checks on the readings of `nvidia-smi -q -x` (agents/nvidia_smi_xml.h): the GPU
// count against what the node should have, PCIe links against their maximum, row remapping and
// clock throttling. Pure functions; each detail names the measurement.

#include <vector>

#include "agents/probe_check.h"
#include "scheduler/model/gpu_reading.h"

namespace orch::agent {

// "gpu-count": fails when fewer GPUs show than `expected` (`7 GPUs of 8 expected`).
Check gpu_count_check(int shown, int expected);

// "gpu-pcie": fails on a link narrower than its maximum (`GPU 0: PCIe x8 of x16`). A lower
// generation than the maximum (`gen 1 of 4`) is named but passes: GPUs that are not busy lower
// their link generation to save power, and the probe runs on idle GPUs.
Check pcie_check(const std::vector<GpuReading>& gpus);

// "gpu-remapped-rows": fails when a row remap is pending (the GPU needs a reset) or failed (it
// needs service).
Check remapped_rows_check(const std::vector<GpuReading>& gpus);

// "gpu-throttle": fails when hardware holds the clocks down (hw_slowdown, hw_thermal,
// hw_power_brake); software caps (sw_power_cap, sw_thermal) are named but pass.
Check throttle_check(const std::vector<GpuReading>& gpus);

}  // namespace orch::agent
