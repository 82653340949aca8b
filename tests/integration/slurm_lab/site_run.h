#pragma once
// What the Slurm lab tests of a site do with one attempt: observe it until it ends (three
// minutes at most), collecting its output lines. Polling a real site: the waits are real.

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "scheduler/cluster_port.h"

namespace orch::test {

inline RunObservation observe_until_exited(ClusterPort& site, const std::string& token,
                                           std::vector<std::string>& lines) {
  using Clock = std::chrono::steady_clock;
  RunObservation last;
  std::uint64_t offset = 0;
  for (auto deadline = Clock::now() + std::chrono::minutes(3); Clock::now() < deadline;) {
    auto obs = site.observe(token, offset);
    if (obs.ok()) {
      lines.insert(lines.end(), obs->new_lines.begin(), obs->new_lines.end());
      offset = obs->next_offset;
      last = *obs;
      if (obs->phase == RunPhase::exited) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return last;
}

}  // namespace orch::test
