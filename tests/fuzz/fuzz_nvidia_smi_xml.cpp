// What nvidia-smi -q -x printed (any driver's layout, a report cut short, another program's
// text) through the agent's hand-written XML reader: parse_nvidia_smi_xml must never crash,
// throw or run away (nesting and size are bounded); the GPUs it keeps are numbered in order, and
// every check on them names something, failing gpu-pcie exactly when a link is narrower than its
// maximum. The same bytes go through the reader of `nvidia-smi nvlink -s` and gpu-nvlink.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "agents/gpu_checks.h"
#include "agents/nvidia_smi.h"
#include "agents/nvidia_smi_xml.h"

namespace {

void fail(const char* why) {
  std::fprintf(stderr, "%s\n", why);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace orch::agent;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  NvidiaSmiXml x = parse_nvidia_smi_xml(text);
  bool narrow = false;
  for (std::size_t i = 0; i < x.gpus.size(); ++i) {
    const orch::GpuReading& g = x.gpus[i];
    if (g.index != static_cast<int>(i)) fail("GPUs out of order");
    for (const auto& v : {g.pcie_gen, g.pcie_gen_max, g.pcie_width, g.pcie_width_max}) {
      if (v && *v < 0) fail("a negative PCIe figure");
    }
    if (g.pcie_width && g.pcie_width_max && *g.pcie_width < *g.pcie_width_max) narrow = true;
  }
  if (x.gpus.empty() && x.error.empty() && text.find("nvidia_smi_log") == std::string_view::npos) {
    fail("text without a report is read as a report");
  }
  std::vector<Check> checks = gpu_checks(x.gpus, 85);
  checks.push_back(pcie_check(x.gpus));
  checks.push_back(remapped_rows_check(x.gpus));
  checks.push_back(throttle_check(x.gpus));
  checks.push_back(gpu_count_check(static_cast<int>(x.gpus.size()), 8));
  for (const Check& c : checks) {
    if (c.name.empty() || c.detail.empty()) fail("a check that says nothing");
  }
  if (checks[3].ok == narrow) fail("gpu-pcie disagrees with the link widths");
  // The same bytes as `nvidia-smi nvlink -s` output.
  std::vector<NvlinkState> links = parse_nvlink_status(text);
  for (const NvlinkState& l : links) {
    if (l.up < 0 || (l.up == 0 && l.down.empty())) fail("an NVLink state with no link");
  }
  if (nvlink_check(links).detail.empty()) fail("gpu-nvlink says nothing");
  return 0;
}
