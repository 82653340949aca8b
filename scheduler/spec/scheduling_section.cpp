#include "scheduler/spec/scheduling_section.h"

#include <charconv>
#include <string>

namespace orch {
namespace {

constexpr std::string_view kExample = "a map such as {hero: 1000, production: 500, ablation: 100}";

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

void read_scheduling(const yaml::MapView& file, SchedulingSpec& out) {
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
    auto value = v.IsScalar() ? integer_of(v.Scalar()) : std::nullopt;
    if (!value || *value < -kMaxPriority || *value > kMaxPriority) {
      r.fail(
          v.IsNull() ? yaml::position_of(k) : yaml::position_of(v),
          "priority class \"" + name + "\" must be " + range_text() + ", got " + yaml::describe(v),
          kExample);
      return;
    }
    if (out.priority_classes.count(name)) {
      r.fail(yaml::position_of(k), "priority class \"" + name + "\" is given twice",
             "each class once");
      return;
    }
    out.priority_classes[name] = static_cast<int>(*value);
  }
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
