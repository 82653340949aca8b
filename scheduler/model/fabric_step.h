#pragma once
// Burn-in's fabric step (issue 43): its settings (`burn_in.fabric:` in clusters.yaml), the step
// the brain asks a site worker to run (every round of node pairs, as one outbox probe action
// whose payload carries "fabric"), and the values of one round as ClusterPort::fabric_round
// takes and returns them. The rounds and their judgement are scheduler/health/fabric.h.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"

namespace orch {

// `burn_in.fabric:` of a cluster (docs/clusters.md).
struct FabricSpec {
  // nccl-tests' all_reduce_perf on the nodes; "" (the default): no fabric step.
  std::string all_reduce_perf;
  int rounds = 0;                  // 0: ceil(log2 n), at least 2 (fabric.h)
  double min_busbw_ratio = 0.6;    // of the median pair
  std::int64_t bytes = 1LL << 30;  // the message size (-b and -e)
  double timeout_s = 120;          // each round (each pair within it)
  int gpus_per_node = 0;           // -g per task; 0: the cluster's gpus_per_node, else 1
  bool enabled() const { return !all_reduce_perf.empty(); }
};

using NodePair = std::pair<std::string, std::string>;

// One round: every pair runs all_reduce_perf at once, each pair's two nodes together.
struct FabricRoundRequest {
  std::string token;  // unique per round ("<step token>-r<i>")
  std::vector<NodePair> pairs;
  std::string all_reduce_perf;
  std::int64_t bytes = 1LL << 30;
  int gpus_per_node = 1;
  double timeout_s = 120;
};

// One pair's outcome. busbw_gb_s: the figure (all_reduce_perf.h, busbw_gb_s()), nullopt when
// it gave none; error: why not (the tool failed, timed out, reported wrong values).
struct FabricPairResult {
  std::string a;
  std::string b;
  std::optional<double> busbw_gb_s;
  std::string error;
};

// The whole step the brain enqueues.
struct FabricStep {
  std::string token;
  std::vector<std::vector<NodePair>> rounds;
  std::string all_reduce_perf;
  std::int64_t bytes = 1LL << 30;
  int gpus_per_node = 1;
  double timeout_s = 120;
  // Round i's request.
  FabricRoundRequest round(std::size_t i) const;
};

nlohmann::json fabric_step_to_json(const FabricStep& step);
// internal when the payload is not a fabric step.
Result<FabricStep> fabric_step_from_json(const nlohmann::json& payload);
// An outbox probe action's payload is a fabric step (it carries "fabric").
bool is_fabric_step(const nlohmann::json& payload);

nlohmann::json fabric_results_to_json(const std::vector<FabricPairResult>& results);

}  // namespace orch
