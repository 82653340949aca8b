#include "scheduler/spec/live_watch_section.h"

namespace orch {

void read_live_watch(const yaml::MapView& entry, LiveWatchSpec& out) {
  yaml::MapView w = entry.child(
      "live_watch", "live_watch",
      {"watch_s", "kernel_log", "nvidia_smi", "gpu_sample_s", "fault_action"},
      "a map such as {watch_s: 2, kernel_log: /dev/kmsg, gpu_sample_s: 30, fault_action: record}");
  // The agent takes 0 (off) or at least 0.1 s, at most a day.
  const yaml::NumberRange period{0.0, false, 86400.0};
  w.read_number("watch_s", out.watch_s, period, "seconds such as 2 (0: no live watch)");
  w.read_number("gpu_sample_s", out.gpu_sample_s, period, "seconds such as 30 (0: no samples)");
  for (const char* key : {"watch_s", "gpu_sample_s"}) {
    const double v = std::string_view(key) == "watch_s" ? out.watch_s : out.gpu_sample_s;
    if (w.reader().failed() || v == 0 || v >= 0.1) continue;
    w.reader().fail(w.value_position(key),
                    "\"" + std::string(key) + "\" must be 0 or at least 0.1 seconds",
                    "seconds such as 2");
  }
  w.read_string("kernel_log", out.kernel_log, yaml::kNonEmpty,
                "a path on the nodes such as /dev/kmsg (\"{node}\" stands for the node's name)");
  w.read_string("nvidia_smi", out.nvidia_smi, yaml::kNonEmpty,
                "a path on the nodes, or none");
  std::string action = out.stop_on_fault ? "stop" : "record";
  w.read_string("fault_action", action, yaml::kNonEmpty, "record or stop");
  if (!w.reader().failed() && action != "record" && action != "stop") {
    w.reader().fail(w.value_position("fault_action"),
                    "\"fault_action\" must be record or stop, got \"" + action + "\"",
                    "record (the site ends the attempt) or stop (the agent stops the job at once)");
  }
  out.stop_on_fault = action == "stop";
}

}  // namespace orch
