// The clusters a running server knows (cluster_registry.h).
#include "scheduler/spec/cluster_registry.h"

namespace orch {

ClusterRegistry::ClusterRegistry(const std::vector<ClusterSpec>& initial)
    : specs_(initial.begin(), initial.end()) {}

std::vector<ClusterSpec> ClusterRegistry::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {specs_.begin(), specs_.end()};
}

std::vector<std::string> ClusterRegistry::names() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  out.reserve(specs_.size());
  for (const ClusterSpec& c : specs_) out.push_back(c.name);
  return out;
}

const ClusterSpec* ClusterRegistry::find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const ClusterSpec& c : specs_) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::vector<std::string> ClusterRegistry::add(const std::vector<ClusterSpec>& specs) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> added;
  for (const ClusterSpec& spec : specs) {
    bool known = false;
    for (const ClusterSpec& c : specs_) known = known || c.name == spec.name;
    if (known) continue;
    specs_.push_back(spec);
    added.push_back(spec.name);
  }
  return added;
}

}  // namespace orch
