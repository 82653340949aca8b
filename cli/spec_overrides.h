#pragma once
// `orchestrate job submit FILE -e KEY=VALUE --set path=value` (issue 42): the spec file's YAML
// (or JSON) changed before it is sent, so one file serves many runs. Pure: text in, text out.

#include <string>
#include <vector>

namespace orch {

struct SpecOverrides {
  std::vector<std::string> env;   // "-e KEY=VALUE": env.KEY set to the string VALUE
  std::vector<std::string> sets;  // "--set a.b.c=value": that key set to value (YAML, so
                                  // --set datasets=[imagenet] sets a list)
  // "--after NAME|ID[:succeeded|ended]" (issue 45): {job, state} appended to the spec's after.
  std::vector<std::string> after;
  bool empty() const { return env.empty() && sets.empty() && after.empty(); }
};

// The spec `text` (from `source`, for messages) with every --set applied in order, then every
// -e, then every --after. A path walks maps by key (made when missing) and lists by index (0-based,
// existing items only). false with `error` saying which argument is wrong and why: a KEY=VALUE
// without '=' or whose KEY is not a variable name, an empty key in a path, a path through a value
// that is neither a map nor a list, a spec that is not YAML or not a map, an --after whose job is
// empty or whose state is neither succeeded nor ended, an after: that is not a list.
bool apply_spec_overrides(const std::string& text, const std::string& source,
                          const SpecOverrides& overrides, std::string& out, std::string& error);

}  // namespace orch
