#include "scheduler/model/topology_hint.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace orch {

std::string slurm_switches_option(const TopologyHint& hint) {
  if (hint.switches <= 0) return "";
  std::string out = "--switches=" + std::to_string(hint.switches);
  if (hint.switches_wait_s > 0) {
    const int s = hint.switches_wait_s;
    char wait[32];
    std::snprintf(wait, sizeof wait, "@%d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60);
    out += wait;
  }
  return out;
}

nlohmann::json topology_to_json(const TopologyHint& hint) {
  nlohmann::json j = nlohmann::json::object();
  if (!hint.level.empty()) {
    j["level"] = hint.level;
    j["required"] = hint.required;
  }
  if (hint.switches > 0) j["switches"] = hint.switches;
  if (hint.switches_wait_s > 0) j["switches_wait_s"] = hint.switches_wait_s;
  return j;
}

Result<TopologyHint> topology_from_json(const nlohmann::json& j) {
  try {
    TopologyHint t;
    t.level = j.value("level", std::string());
    t.required = j.value("required", false);
    t.switches = j.value("switches", 0);
    t.switches_wait_s = j.value("switches_wait_s", 0);
    return t;
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorKind::invalid, std::string("not a topology hint: ") + e.what());
  }
}

}  // namespace orch
