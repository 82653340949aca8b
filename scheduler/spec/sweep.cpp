// Reading and expanding `sweep:` (sweep.h).
#include "scheduler/spec/sweep.h"

#include <string>
#include <vector>

#include "scheduler/model/launch_limits.h"

namespace orch {
namespace {

constexpr std::string_view kSweepShape =
    "a map such as {env: {LR: [1e-4, 3e-4]}, args: [\"--seed 1\", \"--seed 2\"]}";

// A list of at least one scalar, each kept as written.
bool read_values(yaml::Reader& r, const YAML::Node& list, const std::string& what,
                 std::vector<std::string>& out) {
  if (!list.IsSequence() || list.size() == 0) {
    r.fail(yaml::position_of(list), what + " must be a non-empty list, got " + yaml::describe(list),
           "a list of values such as [1e-4, 3e-4]");
    return false;
  }
  for (const auto& v : list) {
    if (!v.IsScalar() || v.Scalar().size() > limits::kMaxArgBytes) {
      r.fail(yaml::position_of(v), what + " has " + yaml::describe(v),
             "scalars (a number or a string) of at most " + std::to_string(limits::kMaxArgBytes) +
                 " bytes");
      return false;
    }
    out.push_back(v.Scalar());
  }
  return true;
}

}  // namespace

void read_sweep(const yaml::MapView& job, JobSpec& spec) {
  yaml::Reader& r = job.reader();
  if (r.failed() || !job.has("sweep")) return;
  yaml::MapView sweep = job.child("sweep", "sweep", {"env", "args"}, kSweepShape);
  if (r.failed()) return;
  if (const yaml::Field* env = sweep.find("env"); env && !env->value.IsNull()) {
    if (!env->value.IsMap()) {
      r.fail(sweep.value_position("env"),
             "sweep.env must be a map, got " + yaml::describe(env->value),
             "a map of variable names to lists of values, such as {LR: [1e-4, 3e-4]}");
      return;
    }
    for (auto it = env->value.begin(); it != env->value.end(); ++it) {
      const YAML::Node k = it->first;  // copies: see MapView::read_string_map
      const YAML::Node v = it->second;
      const std::string name = k.IsScalar() ? k.Scalar() : std::string();
      if (!yaml::is_env_var_name(name) || limits::is_reserved_env(name)) {
        r.fail(yaml::position_of(k),
               "sweep.env names " + yaml::describe(k) +
                   (yaml::is_env_var_name(name) ? ", which orchestrate sets itself" : ""),
               "a variable name of your own: a letter or \"_\", then letters, digits or \"_\"");
        return;
      }
      if (spec.env.count(name)) {
        r.fail(yaml::position_of(k), "sweep.env sets " + name + ", which env sets too",
               "each variable in one place: env for what all points share, sweep.env for what "
               "varies");
        return;
      }
      std::vector<std::string> values;
      if (!read_values(r, v, "sweep.env." + name, values)) return;
      spec.sweep.env.emplace_back(name, std::move(values));
    }
  }
  if (const yaml::Field* args = sweep.find("args"); args && !args->value.IsNull()) {
    if (!read_values(r, args->value, "sweep.args", spec.sweep.args)) return;
    for (const auto& a : spec.sweep.args) {
      if (spec.command.size() + 1 + a.size() > limits::kMaxArgBytes) {
        r.fail(sweep.value_position("args"),
               "the command with sweep.args \"" + a.substr(0, 40) + "...\" is longer than " +
                   std::to_string(limits::kMaxArgBytes) + " bytes",
               "shorter arguments, or a script that reads them from the environment");
        return;
      }
    }
  }
  if (spec.sweep.empty()) {
    r.fail(job.value_position("sweep"), "sweep gives no values",
           "\"env\", \"args\" or both, such as {env: {LR: [1e-4, 3e-4]}}");
    return;
  }
  // Counted as it grows, so that a wide grid cannot overflow.
  std::size_t points = spec.sweep.args.empty() ? 1 : spec.sweep.args.size();
  for (const auto& [name, values] : spec.sweep.env) {
    points *= values.size();
    if (points > kMaxSweepPoints) break;
  }
  if (points > kMaxSweepPoints) {
    r.fail(job.value_position("sweep"),
           "sweep makes more than " + std::to_string(kMaxSweepPoints) + " jobs",
           "a smaller grid (at most " + std::to_string(kMaxSweepPoints) +
               " points: the product of the value counts)");
    return;
  }
  const std::size_t longest = spec.name.size() + 1 + std::to_string(points).size();
  if (longest > 64) {
    r.fail(
        job.value_position("name"),
        "name \"" + spec.name + "\" is too long for a sweep of " + std::to_string(points) +
            " points (each job is named " + spec.name + "-<n>)",
        "a name of at most " + std::to_string(64 - (longest - spec.name.size())) + " characters");
    return;
  }
  if (spec.group.empty()) spec.group = spec.name;
}

std::vector<JobSpec> expand_sweep(const JobSpec& spec) {
  if (spec.sweep.empty()) return {spec};
  const SweepSpec& grid = spec.sweep;
  const std::size_t n_args = grid.args.empty() ? 1 : grid.args.size();
  const std::size_t total = grid.points();
  std::vector<JobSpec> out;
  out.reserve(total);
  for (std::size_t i = 0; i < total; ++i) {
    JobSpec point = spec;
    point.sweep = SweepSpec{};
    point.name = spec.name + "-" + std::to_string(i + 1);
    // Mixed radix: the args vary fastest, then the env keys from the last to the first.
    std::size_t rest = i;
    if (!grid.args.empty()) point.command += " " + grid.args[rest % n_args];
    rest /= n_args;
    std::vector<std::string> labels;  // the env values, last key first
    for (auto it = grid.env.rbegin(); it != grid.env.rend(); ++it) {
      const std::string& value = it->second[rest % it->second.size()];
      point.env[it->first] = value;
      labels.push_back(it->first + "=" + value);
      rest /= it->second.size();
    }
    for (auto it = labels.rbegin(); it != labels.rend(); ++it) {
      point.sweep_point += (point.sweep_point.empty() ? "" : " ") + *it;
    }
    if (!grid.args.empty()) {
      point.sweep_point += (point.sweep_point.empty() ? "" : " ") + grid.args[i % n_args];
    }
    out.push_back(std::move(point));
  }
  return out;
}

}  // namespace orch
