#pragma once
// The clusters a running server knows: those it started with and those added since (`orchestrate
// cluster add`, a reload that finds a new one), shared by the threads that answer requests and
// move data. Append-only: a spec once in never changes or moves, so a pointer from find() stays
// valid as long as the registry does. Every member may be called from any thread.

#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/spec/cluster_spec.h"

namespace orch {

class ClusterRegistry {
 public:
  explicit ClusterRegistry(const std::vector<ClusterSpec>& initial = {});
  ClusterRegistry(const ClusterRegistry&) = delete;
  ClusterRegistry& operator=(const ClusterRegistry&) = delete;

  // A copy of every spec, in the order they joined.
  std::vector<ClusterSpec> snapshot() const;
  std::vector<std::string> names() const;
  // The spec of that name, or null; the pointer stays valid.
  const ClusterSpec* find(std::string_view name) const;
  // Appends the specs whose names are new; returns the names it appended.
  std::vector<std::string> add(const std::vector<ClusterSpec>& specs);

 private:
  mutable std::mutex mu_;
  std::deque<ClusterSpec> specs_;
};

}  // namespace orch
