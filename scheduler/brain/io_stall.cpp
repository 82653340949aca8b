// See io_stall.h.
#include "scheduler/brain/io_stall.h"

#include <algorithm>
#include <cmath>

namespace orch {

double io_stall_after_s(const CheckpointSpec& spec, std::vector<double> save_times_s) {
  save_times_s.erase(std::remove_if(save_times_s.begin(), save_times_s.end(),
                                    [](double s) { return !(s >= 0) || !std::isfinite(s); }),
                     save_times_s.end());
  if (spec.stall_factor <= 0 || save_times_s.size() < kIoStallMinSaves) return 0;
  std::sort(save_times_s.begin(), save_times_s.end());
  const std::size_t n = save_times_s.size();
  const double median =
      n % 2 ? save_times_s[n / 2] : (save_times_s[n / 2 - 1] + save_times_s[n / 2]) / 2;
  return std::max(spec.stall_min_s, spec.stall_factor * median);
}

std::string io_stall_message(const TaskAlert& a) {
  std::string who = a.node.empty() ? "" : " on " + a.node;
  if (a.rank >= 0) who += " (task " + std::to_string(a.rank) + ")";
  return "io stall" + who + ": " + a.detail;
}

Result<void> raise_io_stalls(BrainCore& core, const AttemptRow& attempt,
                             const std::vector<TaskAlert>& alerts) {
  for (const TaskAlert& alert : alerts) {
    if (alert.kind != "io_stall" || alert.path.empty()) continue;
    IoStallRow row{attempt.id,      attempt.job_id, attempt.cluster,    alert.node,
                   alert.step,      alert.path,     alert.fs,           alert.mount,
                   alert.running_s, alert.after_s,  core.clock.now_ms()};
    auto added = core.store.add_io_stall(row);
    if (!added) return added.error();
    if (!*added) continue;  // an earlier poll raised it
    if (auto r = core.event(attempt.job_id, attempt.no, "io-stall", io_stall_message(alert)); !r) {
      return r;
    }
  }
  return Ok{};
}

}  // namespace orch
