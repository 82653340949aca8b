#include "scheduler/spec/submission_rules.h"

#include <algorithm>
#include <optional>

#include "scheduler/common/text.h"

namespace orch {
namespace {

bool class_open_to(const SchedulingSpec& s, const std::string& cls, const std::string& team) {
  auto it = s.class_teams.find(cls);
  if (it == s.class_teams.end()) return true;
  return std::find(it->second.begin(), it->second.end(), team) != it->second.end();
}

// The classes the team may use, "hero (1000), production (500)", highest first.
std::string usable_classes(const SchedulingSpec& s, const std::string& team,
                           std::optional<int> ceiling) {
  std::vector<std::pair<int, std::string>> usable;
  for (const auto& [name, value] : s.priority_classes) {
    if (!class_open_to(s, name, team) || (ceiling && value > *ceiling)) continue;
    usable.emplace_back(value, name);
  }
  std::sort(usable.rbegin(), usable.rend());
  std::string out;
  for (const auto& [value, name] : usable) {
    out += (out.empty() ? "" : ", ") + name + " (" + std::to_string(value) + ")";
  }
  return out.empty() ? std::string("none") : out;
}

// The highest priority the team may give a job; nullopt: no bound (no class, no max_priority).
std::optional<int> ceiling_of(const SchedulingSpec& s, const std::string& team) {
  if (auto t = s.teams.find(team); t != s.teams.end() && t->second.max_priority) {
    return t->second.max_priority;
  }
  std::optional<int> best;
  for (const auto& [name, value] : s.priority_classes) {
    if (class_open_to(s, name, team)) best = std::max(best.value_or(value), value);
  }
  if (!best && !s.priority_classes.empty()) return 0;  // every class is another team's
  return best;
}

Error at_priority(ErrorKind kind, std::string message) {
  Error e = make_error(kind, std::move(message));
  e.where = "priority|priority_class";
  return e;
}

std::string team_text(const std::string& team) {
  return team.empty() ? std::string("a job without a team") : "team " + team;
}

}  // namespace

Result<void> bind_team(JobSpec& spec, const Submitter& who) {
  if (who.any_team) return {};
  if (spec.team.empty()) {
    if (!who.teams.empty()) spec.team = who.teams.front();
    return {};
  }
  if (std::find(who.teams.begin(), who.teams.end(), spec.team) != who.teams.end()) return {};
  const std::string may =
      who.teams.empty() ? who.user + " is bound to no team and may submit only jobs without one"
                        : who.user + " may submit for " + join(who.teams);
  Error e = make_error(ErrorKind::forbidden,
                       who.user + " may not submit for team " + spec.team + "; " + may +
                           " (an administrator binds teams to a token: orchestrate token create " +
                           who.user + " --role user --teams ...; operators may act for any team)");
  e.where = "team";
  return e;
}

Result<void> check_priority(const SchedulingSpec& scheduling, const JobSpec& spec,
                            const Submitter& who) {
  if (who.any_team) return {};
  const std::optional<int> ceiling = ceiling_of(scheduling, spec.team);
  if (!spec.priority_class.empty()) {
    auto cls = scheduling.priority_classes.find(spec.priority_class);
    if (cls == scheduling.priority_classes.end()) return {};  // resolve_priority says why
    const bool open = class_open_to(scheduling, spec.priority_class, spec.team);
    if (open && (!ceiling || cls->second <= *ceiling)) return {};
    return at_priority(
        ErrorKind::forbidden,
        team_text(spec.team) + " may not use priority class " + spec.priority_class +
            (open ? " (above its max_priority of " + std::to_string(*ceiling) + ")"
                  : " (it is for " + join(scheduling.class_teams.at(spec.priority_class)) + ")") +
            "; classes it may use: " + usable_classes(scheduling, spec.team, ceiling));
  }
  if (!ceiling || spec.priority <= *ceiling) return {};
  return at_priority(
      ErrorKind::forbidden,
      "priority " + std::to_string(spec.priority) + " is above what " + team_text(spec.team) +
          " may use (" + std::to_string(*ceiling) +
          "); classes it may use: " + usable_classes(scheduling, spec.team, ceiling));
}

}  // namespace orch
