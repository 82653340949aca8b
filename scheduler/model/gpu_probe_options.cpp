// See gpu_probe_options.h.
#include "scheduler/model/gpu_probe_options.h"

#include "scheduler/model/flag_number.h"

namespace orch {

std::vector<std::string> gpu_probe_args(const GpuProbeOptions& o) {
  std::vector<std::string> args;
  if (!o.nvidia_smi.empty()) args.insert(args.end(), {"--nvidia-smi", o.nvidia_smi});
  if (o.expect_gpus > 0) args.insert(args.end(), {"--expect-gpus", std::to_string(o.expect_gpus)});
  if (o.dcgm_level > 0) {
    args.insert(args.end(), {"--dcgm", o.dcgmi.empty() ? std::string("dcgmi") : o.dcgmi,
                             "--dcgm-level", std::to_string(o.dcgm_level)});
  }
  if (!o.torch_python.empty()) {
    args.insert(args.end(),
                {"--torch-python", o.torch_python, "--torch-s", flag_number(o.torch_s)});
  }
  return args;
}

double gpu_probe_extra_s(const GpuProbeOptions& o) {
  static constexpr double kDcgmS[] = {0, 90, 180, 1800};
  double s = o.dcgm_level >= 1 && o.dcgm_level <= 3 ? kDcgmS[o.dcgm_level] : 0;
  // The agent kills the torch probe 60 s after its budget (kTorchStartupGraceS in
  // agents/torch_probe.h: the interpreter and its per-GPU processes start first).
  if (!o.torch_python.empty()) s += o.torch_s + 60;
  return s;
}

}  // namespace orch
