// See gpu_checks.h.
#include "agents/gpu_checks.h"

#include <algorithm>
#include <cstdio>
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

std::vector<NvlinkState> parse_nvlink_status(std::string_view text) {
  std::vector<NvlinkState> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(start, nl - start);
    start = nl + 1;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    int n = 0;
    char colon = 0;
    std::string copy(line.substr(0, 64));
    if (std::sscanf(copy.c_str(), "GPU %d%c", &n, &colon) == 2 && colon == ':' && n >= 0) {
      out.push_back(NvlinkState{n, 0, {}});
      continue;
    }
    double gb_s = 0;
    if (out.empty() || std::sscanf(copy.c_str(), "Link %d%c", &n, &colon) != 2 || colon != ':') {
      continue;
    }
    std::string value = copy.substr(copy.find(':') + 1);
    bool up = value.find("<inactive>") == std::string::npos &&
              std::sscanf(value.c_str(), " %lf", &gb_s) == 1 && gb_s > 0;
    if (up) {
      ++out.back().up;
    } else {
      out.back().down.push_back(n);
    }
  }
  std::erase_if(out, [](const NvlinkState& s) { return s.up == 0 && s.down.empty(); });
  return out;
}

Check nvlink_check(const std::vector<NvlinkState>& links) {
  int best = 0;
  for (const NvlinkState& s : links) best = std::max(best, s.up);
  std::vector<std::string> bad;
  for (const NvlinkState& s : links) {
    if (s.up >= best) continue;
    std::vector<std::string> down;
    for (int l : s.down) down.push_back(std::to_string(l));
    bad.push_back("GPU " + std::to_string(s.index) + ": " + std::to_string(s.up) + " of " +
                  std::to_string(best) + " NVLinks up (down: " + join(down, ", ") + ")");
  }
  return verdict(
      "gpu-nvlink", bad,
      std::to_string(links.size()) + " GPUs, " + std::to_string(best) + " NVLinks up on each");
}

}  // namespace orch::agent
