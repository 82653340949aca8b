#pragma once
// What an attempt remembers to judge its silence (scheduler/lifecycle/hang_policy.h): plain
// data, kept on the attempt's row.

#include <vector>

namespace orch {

struct HangWatch {
  bool adaptive = false;        // the spec left hang_after_s unset: the limit follows step times
  std::vector<double> steps_s;  // the newest step times in seconds, oldest first (adaptive only)
};

}  // namespace orch
