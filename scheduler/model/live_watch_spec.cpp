#include "scheduler/model/live_watch_spec.h"

#include "scheduler/model/flag_number.h"

namespace orch {

std::vector<std::string> live_watch_flags(const LiveWatchSpec& spec) {
  std::vector<std::string> out = {"--watch-s",      flag_number(spec.watch_s),
                                  "--gpu-sample-s", flag_number(spec.gpu_sample_s),
                                  "--fault-action", spec.stop_on_fault ? "stop" : "record"};
  if (!spec.kernel_log.empty()) out.insert(out.end(), {"--kernel-log", spec.kernel_log});
  if (!spec.nvidia_smi.empty()) out.insert(out.end(), {"--nvidia-smi", spec.nvidia_smi});
  return out;
}

}  // namespace orch
