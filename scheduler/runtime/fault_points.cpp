#include "scheduler/runtime/fault_points.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace orch {
namespace {

const std::string& enabled_faults() {
  static const std::string kFaults = [] {
    const char* v = std::getenv("ORCH_FAULTS");
    return v ? "," + std::string(v) + "," : std::string();
  }();
  return kFaults;
}

}  // namespace

void fault_point(std::string_view name) {
  const std::string& faults = enabled_faults();
  if (faults.empty()) return;
  if (faults.find("," + std::string(name) + ",") == std::string::npos) return;
  std::fprintf(stderr, "orchestrate: fault point %.*s reached (ORCH_FAULTS): killing myself\n",
               static_cast<int>(name.size()), name.data());
  std::fflush(stderr);
  std::raise(SIGKILL);
}

}  // namespace orch
