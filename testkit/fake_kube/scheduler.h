#pragma once
// The fake's kube-scheduler, as a pure function: which node a pending pod goes to, or the
// "0/N nodes are available: ..." message of an unschedulable pod. Filters, in the real
// scheduler's words: spec.unschedulable, nodeSelector and required node affinity,
// untolerated NoSchedule/NoExecute taints (a node whose Ready condition is not True counts as
// tainted not-ready), and free nvidia.com/gpu (allocatable minus what the node's
// non-terminated pods ask for). Among the nodes that fit, the one with the most free GPUs wins
// (ties: by name), like the default least-allocated scoring.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace orch::fake_kube {

struct Placement {
  std::string node;     // empty when unschedulable
  std::string message;  // why, when unschedulable
};

Placement schedule_pod(const nlohmann::json& pod, const std::vector<nlohmann::json>& nodes,
                       const std::vector<nlohmann::json>& pods);

bool node_ready(const nlohmann::json& node);
bool tolerates(const nlohmann::json& tolerations, const nlohmann::json& taint);

}  // namespace orch::fake_kube
