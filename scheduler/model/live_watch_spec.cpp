#include "scheduler/model/live_watch_spec.h"

#include <cstdio>

namespace orch {
namespace {

// Seconds as the agent's flags take them: "2", "0.5".
std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

std::vector<std::string> live_watch_flags(const LiveWatchSpec& spec) {
  std::vector<std::string> out = {"--watch-s",     seconds(spec.watch_s),
                                  "--gpu-sample-s", seconds(spec.gpu_sample_s),
                                  "--fault-action", spec.stop_on_fault ? "stop" : "record"};
  if (!spec.kernel_log.empty()) out.insert(out.end(), {"--kernel-log", spec.kernel_log});
  if (!spec.nvidia_smi.empty()) out.insert(out.end(), {"--nvidia-smi", spec.nvidia_smi});
  return out;
}

}  // namespace orch
