#include "scheduler/spec/scheduling_section.h"

#include <charconv>
#include <string>

#include "scheduler/spec/price_section.h"

namespace orch {
namespace {

constexpr std::string_view kExample =
    "a map such as {hero: {value: 1000, teams: [llm]}, production: 500, ablation: 100}";

std::optional<long long> integer_of(const std::string& text) {
  long long v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end) return std::nullopt;
  return v;
}

std::string range_text() {
  return "an integer from " + std::to_string(-kMaxPriority) + " to " + std::to_string(kMaxPriority);
}

}  // namespace

namespace {

constexpr std::string_view kTeamExample =
    "a map of team names to quotas, such as {vision: {gpus: 64, clusters: {alpha: 32}}, nlp: "
    "{gpus: 16, borrow: false}}";
constexpr long long kMaxQuotaGpus = 10'000'000;

void read_team(yaml::Reader& r, const std::string& name, const YAML::Node& value,
               const std::vector<ClusterSpec>& clusters, const SchedulingSpec& spec,
               TeamQuota& out) {
  yaml::MapView team(r, value, "team \"" + name + "\"",
                     {"gpus", "clusters", "borrow", "max_priority", "budget", "objective"},
                     "a map such as {gpus: 64, clusters: {alpha: 32}, borrow: true}");
  if (r.failed()) return;
  team.read_int("gpus", out.gpus, 0, kMaxQuotaGpus, "the GPUs the team may hold fleet-wide");
  team.read_int("max_priority", out.max_priority, -kMaxPriority, kMaxPriority,
                "the highest priority the team's jobs may ask for, such as 500");
  team.read_bool("borrow", out.borrow, "true (the default) or false");
  read_team_money(team, name, spec, clusters, out);
  if (r.failed()) return;
  if (const yaml::Field* f = team.find("clusters"); f && !f->value.IsNull()) {
    if (!f->value.IsMap()) {
      r.fail(team.value_position("clusters"),
             "team \"" + name + "\": \"clusters\" must be a map, got " + yaml::describe(f->value),
             "a map of cluster names to GPUs, such as {alpha: 32}");
      return;
    }
    std::vector<std::string_view> known;
    for (const auto& c : clusters) known.push_back(c.name);
    for (auto it = f->value.begin(); it != f->value.end(); ++it) {
      const YAML::Node k = it->first;  // copies: see MapView::read_string_map
      const YAML::Node v = it->second;
      const std::string cluster = k.IsScalar() ? k.Scalar() : std::string();
      if (!find_cluster(clusters, cluster)) {
        std::string why = "team \"" + name + "\" gives a quota on " + yaml::describe(k) +
                          ", which is not a cluster of this file";
        if (auto near = yaml::nearest(cluster, known))
          why += " (did you mean \"" + std::string(*near) + "\"?)";
        r.fail(yaml::position_of(k), why, "a cluster name from \"clusters\"");
        return;
      }
      auto gpus = yaml::scalar_to_integer(v);
      if (!gpus || *gpus < 0 || *gpus > kMaxQuotaGpus) {
        r.fail(v.IsNull() ? yaml::position_of(k) : yaml::position_of(v),
               "team \"" + name + "\": the quota on " + cluster +
                   " must be a whole number of GPUs " + "from 0 to " +
                   std::to_string(kMaxQuotaGpus) + ", got " + yaml::describe(v),
               "a map of cluster names to GPUs, such as {alpha: 32}");
        return;
      }
      if (out.cluster_gpus.count(cluster)) {
        r.fail(yaml::position_of(k), "team \"" + name + "\" gives a quota on " + cluster + " twice",
               "each cluster once");
        return;
      }
      out.cluster_gpus[cluster] = static_cast<int>(*gpus);
    }
  }
  if (!out.gpus && out.cluster_gpus.empty() && !out.budget.configured && !out.objective) {
    r.fail(team.position(), "team \"" + name + "\" gives no quota",
           "\"gpus\" (fleet-wide), \"clusters\" (per cluster), or both");
  }
}

void read_teams(const yaml::MapView& file, const std::vector<ClusterSpec>& clusters,
                SchedulingSpec& out) {
  yaml::Reader& r = file.reader();
  const yaml::Field* field = file.find("teams");
  if (!field || field->value.IsNull()) return;
  if (!field->value.IsMap()) {
    r.fail(file.value_position("teams"),
           "\"teams\" must be a map, got " + yaml::describe(field->value), kTeamExample);
    return;
  }
  for (auto it = field->value.begin(); it != field->value.end(); ++it) {
    const YAML::Node k = it->first;
    const YAML::Node v = it->second;
    if (!k.IsScalar() || !yaml::is_name(k.Scalar())) {
      r.fail(yaml::position_of(k),
             "a team name must be 1 to 64 letters, digits, \".\", \"_\" or \"-\", got " +
                 yaml::describe(k),
             kTeamExample);
      return;
    }
    if (out.teams.count(k.Scalar())) {
      r.fail(yaml::position_of(k), "team \"" + k.Scalar() + "\" is given twice", "each team once");
      return;
    }
    TeamQuota quota;
    read_team(r, k.Scalar(), v, clusters, out, quota);
    if (r.failed()) return;
    out.teams[k.Scalar()] = std::move(quota);
  }
}

// {value: 1000, teams: [llm]}: a class only the named teams' jobs may use. The value's node
// (null when absent: the caller reports it), the teams in `teams`.
YAML::Node read_class_map(yaml::Reader& r, const std::string& name, const YAML::Node& v,
                          std::vector<std::string>& teams) {
  yaml::MapView entry(r, v, "priority class \"" + name + "\"", {"value", "teams"},
                      "a map such as {value: 1000, teams: [llm]}");
  if (r.failed()) return YAML::Node();
  entry.require("value", "value: the class's priority, such as 1000");
  entry.read_string_list("teams", teams, yaml::kName, "the teams that may use it, such as [llm]");
  if (r.failed()) return YAML::Node();
  if (entry.has("teams") && teams.empty()) {
    r.fail(entry.value_position("teams"),
           "priority class \"" + name + "\" names no team: no job could use it",
           "one team or more, or leave teams out so that every team may use it");
    return YAML::Node();
  }
  const yaml::Field* field = entry.find("value");
  return field ? field->value : YAML::Node();
}

void read_priority_classes(const yaml::MapView& file, SchedulingSpec& out) {
  yaml::Reader& r = file.reader();
  const yaml::Field* field = file.find("priority_classes");
  if (!field || field->value.IsNull()) return;
  const YAML::Node& map = field->value;
  if (!map.IsMap()) {
    r.fail(file.value_position("priority_classes"),
           "\"priority_classes\" must be a map, got " + yaml::describe(map), kExample);
    return;
  }
  for (auto it = map.begin(); it != map.end(); ++it) {
    const YAML::Node k = it->first;  // copies: see MapView::read_string_map
    const YAML::Node v = it->second;
    if (!k.IsScalar() || !yaml::is_name(k.Scalar()) || integer_of(k.Scalar())) {
      r.fail(yaml::position_of(k),
             "a priority class name must be 1 to 64 letters, digits, \".\", \"_\" or \"-\", and "
             "not a number, got " +
                 yaml::describe(k),
             kExample);
      return;
    }
    const std::string name = k.Scalar();
    if (out.priority_classes.count(name)) {
      r.fail(yaml::position_of(k), "priority class \"" + name + "\" is given twice",
             "each class once");
      return;
    }
    std::vector<std::string> teams;
    const YAML::Node value_node = v.IsMap() ? read_class_map(r, name, v, teams) : v;
    if (r.failed()) return;
    auto value = value_node.IsScalar() ? integer_of(value_node.Scalar()) : std::nullopt;
    if (!value || *value < -kMaxPriority || *value > kMaxPriority) {
      r.fail(value_node.IsNull() ? yaml::position_of(v.IsNull() ? k : v)
                                 : yaml::position_of(value_node),
             "priority class \"" + name + "\" must be " + range_text() + ", got " +
                 yaml::describe(value_node),
             kExample);
      return;
    }
    if (!teams.empty()) out.class_teams[name] = std::move(teams);
    out.priority_classes[name] = static_cast<int>(*value);
  }
}

}  // namespace

void read_scheduling(const yaml::MapView& file, const std::vector<ClusterSpec>& clusters,
                     SchedulingSpec& out) {
  read_priority_classes(file, out);
  if (!file.reader().failed()) read_teams(file, clusters, out);
  if (!file.reader().failed()) read_placement(file, out);
}

std::optional<int> resolve_priority(const SchedulingSpec& spec, const std::string& name,
                                    std::string& why) {
  if (auto it = spec.priority_classes.find(name); it != spec.priority_classes.end()) {
    return it->second;
  }
  std::vector<std::string_view> names;
  std::string known;
  for (const auto& [n, v] : spec.priority_classes) {
    names.push_back(n);
    known += (known.empty() ? "" : ", ") + n + " (" + std::to_string(v) + ")";
  }
  why = "priority class \"" + name + "\" is not in the clusters file's priority_classes";
  if (auto near = yaml::nearest(name, names))
    why += " (did you mean \"" + std::string(*near) + "\"?)";
  why += known.empty() ? "; the clusters file defines no priority class: give an integer, or add "
                         "priority_classes to it"
                       : "; known classes: " + known + ", or an integer";
  return std::nullopt;
}

}  // namespace orch
