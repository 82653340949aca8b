// Incident keys and counts of the node ledger (incidents.h).
#include "scheduler/health/incidents.h"

#include <set>

namespace orch {

std::string incident_key(const IncidentContext& c) {
  if (!c.open_episode.empty()) return c.open_episode;
  if (c.kind == "node-unhealthy") {
    if (!c.unlisted_failure.empty()) return c.unlisted_failure;
    return "down " + std::to_string(c.at_ms);
  }
  if (c.job_id && c.attempt_no) {
    return "job " + std::to_string(*c.job_id) + " attempt " + std::to_string(*c.attempt_no);
  }
  return c.kind + " " + std::to_string(c.at_ms);
}

std::vector<Millis> incident_times(const std::vector<LedgerIncident>& entries, Millis from_ms) {
  std::vector<Millis> out;
  std::set<std::string> seen;
  for (const auto& e : entries) {
    if (e.at_ms < from_ms) continue;
    if (!e.incident.empty() && !seen.insert(e.incident).second) continue;
    out.push_back(e.at_ms);
  }
  return out;
}

}  // namespace orch
