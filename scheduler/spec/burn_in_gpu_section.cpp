#include "scheduler/spec/burn_in_gpu_section.h"

#include <string>

namespace orch {
namespace {

// A key that does nothing without another: an error at the key, naming the one it needs.
void needs(yaml::MapView& g, std::string_view key, bool other_set, const std::string& hint) {
  if (g.reader().failed() || !g.has(key) || other_set) return;
  g.reader().fail(g.key_position(key), "\"burn_in.gpu." + std::string(key) + "\" " + hint, hint);
}

}  // namespace

void read_burn_in_gpu(const yaml::MapView& burn_in, GpuBurnInSpec& out) {
  yaml::MapView g =
      burn_in.child("gpu", "burn_in.gpu",
                    {"nvidia_smi", "dcgm_level", "dcgmi", "torch_python", "torch_s",
                     "min_tflops_ratio", "min_datasheet_ratio"},
                    "a map such as {dcgm_level: 2, torch_python: python3, min_tflops_ratio: 0.8}");
  out.configured = burn_in.has("gpu");
  g.read_string("nvidia_smi", out.nvidia_smi, yaml::kNonEmpty,
                "a path on the nodes such as /usr/bin/nvidia-smi, or none");
  g.read_int("dcgm_level", out.dcgm_level, 0, 3,
             "0 (no DCGM diagnostic), 1 (quick), 2 (medium) or 3 (long)");
  g.read_string("dcgmi", out.dcgmi, yaml::kNonEmpty, "a path on the nodes, or dcgmi (in PATH)");
  g.read_string("torch_python", out.torch_python, yaml::kAnyString,
                "an interpreter on the nodes with torch, such as python3 (\"\": no torch probe)");
  // The agent takes at most an hour for the torch probe.
  g.read_number("torch_s", out.torch_s, {0.0, true, 3600.0}, "seconds such as 20");
  const yaml::NumberRange ratio{0.0, false, 1.0};
  g.read_number("min_tflops_ratio", out.min_tflops_ratio, ratio,
                "a share of the cluster median such as 0.8");
  g.read_number("min_datasheet_ratio", out.min_datasheet_ratio, ratio,
                "a share of the accelerator's peak such as 0.5");
  needs(g, "dcgmi", out.dcgm_level > 0, "has no effect while dcgm_level is 0: set dcgm_level: 2");
  needs(g, "torch_s", !out.torch_python.empty(),
        "has no effect without torch_python: set torch_python: python3");
}

}  // namespace orch
