#pragma once
// The probe's checks on the readings of `nvidia-smi -q -x` (agents/nvidia_smi_xml.h): the GPU
// count against what the node should have, PCIe links against their maximum, row remapping and
// clock throttling. Pure functions; each detail names the measurement.

#include <string_view>
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

// `nvidia-smi nvlink -s`: per GPU (by its index in the output's "GPU N:" lines) the NVLinks up
// and down ("Link 4: <inactive>", or 0 GB/s). GPUs without link lines are left out.
struct NvlinkState {
  int index = 0;
  int up = 0;
  std::vector<int> down;  // the links' numbers
};
std::vector<NvlinkState> parse_nvlink_status(std::string_view text);

// "gpu-nvlink": fails a GPU with fewer links up than the node's best GPU (`GPU 3: 16 of 18
// NVLinks up (down: 4, 5)`). Boards wire the same links on every GPU, so a link that is down on
// every GPU alike (an unbridged H100 PCIe pair) passes.
Check nvlink_check(const std::vector<NvlinkState>& links);

}  // namespace orch::agent
