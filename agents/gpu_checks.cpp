// See gpu_checks.h.
#include "agents/gpu_checks.h"

#include <algorithm>
#include <string>

#include "scheduler/common/text.h"

namespace orch::agent {
namespace {

std::string gpu_name(const GpuReading& g) {
  std::string s = "GPU " + std::to_string(g.index);
  if (!g.pci_bus_id.empty()) s += " (" + g.pci_bus_id + ")";
  return s;
}

Check verdict(const char* name, const std::vector<std::string>& bad, std::string good) {
  Check c{name, bad.empty(), std::move(good)};
  if (!bad.empty()) c.detail = join(bad, "; ");
  return c;
}

}  // namespace

Check gpu_count_check(int shown, int expected) {
  std::string detail = std::to_string(shown) + (shown == 1 ? " GPU" : " GPUs") + " of " +
                       std::to_string(expected) + " expected";
  return Check{"gpu-count", shown >= expected, detail};
}

Check pcie_check(const std::vector<GpuReading>& gpus) {
  std::vector<std::string> bad;
  std::vector<std::string> idle;
  int reported = 0;
  for (const GpuReading& g : gpus) {
    if (g.pcie_width && g.pcie_width_max) {
      ++reported;
      if (*g.pcie_width < *g.pcie_width_max) {
        bad.push_back(gpu_name(g) + ": PCIe x" + std::to_string(*g.pcie_width) + " of x" +
                      std::to_string(*g.pcie_width_max));
      }
    }
    if (g.pcie_gen && g.pcie_gen_max && *g.pcie_gen < *g.pcie_gen_max) {
      idle.push_back(gpu_name(g) + ": gen " + std::to_string(*g.pcie_gen) + " of " +
                     std::to_string(*g.pcie_gen_max));
    }
  }
  std::string good = reported == 0 ? "no GPU reports its PCIe link"
                                   : std::to_string(reported) + " GPUs at their full PCIe width";
  // Not a failure: a GPU that is not busy lowers its link generation to save power (a healthy
  // RTX PRO 6000 at P8 reads gen 1 of 4), and the probe runs on idle GPUs.
  if (!idle.empty()) good += " (link generation lowered while not busy: " + join(idle, "; ") + ")";
  return verdict("gpu-pcie", bad, good);
}

Check remapped_rows_check(const std::vector<GpuReading>& gpus) {
  std::vector<std::string> bad;
  int reported = 0;
  std::int64_t unc = 0;
  for (const GpuReading& g : gpus) {
    if (!g.remapped_rows_pending && !g.remapped_rows_failure) continue;
    ++reported;
    unc += g.remapped_rows_uncorrectable.value_or(0);
    if (g.remapped_rows_failure.value_or(false)) {
      bad.push_back(gpu_name(g) + ": row remapping failed (the GPU needs service)");
    } else if (g.remapped_rows_pending.value_or(false)) {
      bad.push_back(gpu_name(g) + ": a row remap is pending (reset the GPU)");
    }
  }
  std::string good = reported == 0
                         ? "row remapping not reported (GPUs before Ampere retire pages instead)"
                         : std::to_string(reported) + " GPUs, no row remap pending or failed (" +
                               std::to_string(unc) + " rows remapped for uncorrectable errors)";
  return verdict("gpu-remapped-rows", bad, good);
}

Check throttle_check(const std::vector<GpuReading>& gpus) {
  static const char* kHardware[] = {"hw_slowdown", "hw_thermal", "hw_power_brake"};
  std::vector<std::string> bad, soft;
  int reported = 0;
  for (const GpuReading& g : gpus) {
    if (!g.throttle) continue;
    ++reported;
    std::vector<std::string> hw, sw;
    for (const std::string& r : *g.throttle) {
      bool hard = std::find(std::begin(kHardware), std::end(kHardware), r) != std::end(kHardware);
      if (hard) hw.push_back(r);
      if (r == "sw_power_cap" || r == "sw_thermal") sw.push_back(r);
    }
    if (!hw.empty()) bad.push_back(gpu_name(g) + ": clocks held down by " + join(hw, ", "));
    if (!sw.empty()) soft.push_back(gpu_name(g) + ": " + join(sw, ", "));
  }
  std::string good = reported == 0 ? "no GPU reports its clock event reasons"
                                   : std::to_string(reported) + " GPUs, no hardware slowdown";
  if (!soft.empty()) good += " (software caps: " + join(soft, "; ") + ")";
  return verdict("gpu-throttle", bad, good);
}

}  // namespace orch::agent
