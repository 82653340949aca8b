#pragma once
// The fabric, pair by pair (issue 43): which node pairs run all-reduce together in each round,
// and what their bus bandwidths say about the nodes and the links between them. Pure.
//
// Schedule: the rounds of a round-robin tournament (the circle method), the first `rounds` of
// them. Each round is a matching (no node in two pairs; with an odd count one node sits out), and
// no pair meets twice, so after R rounds every node has met R partners (R - 1 when it sat out
// once). The default R = ceil(log2 n), at least 2 (a node needs two partners before its fault
// can be told from its link's), at most the tournament's length (n - 1 rounds, n when n is odd).
//
// Judgement, against the median pair's bus bandwidth M over every pair measured:
// - a pair is slow when it measured below min_busbw_ratio x M, or failed (no figure, an error,
//   or wrong values reported by the tool);
// - a node is slow when every one of its pairings is slow: the fault is the node's (its NIC, its
//   GPUs' PCIe, its cabling to every switch port);
// - a slow pair whose two nodes both have a good pairing elsewhere is a slow pair alone: the
//   link between them (a miscabled or degraded port), named with both nodes and the figure.
// A node with no measured pairing is not judged (passed, said so).

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/model/fabric_step.h"

namespace orch {

using FabricPair = NodePair;
using FabricRound = std::vector<FabricPair>;

// The rounds for `nodes` (in the order given; a pair lists its earlier node first). rounds <= 0:
// the default above. Fewer than two nodes: no rounds.
std::vector<FabricRound> fabric_schedule(const std::vector<std::string>& nodes, int rounds = 0);

// The default round count for n nodes (see above).
int default_fabric_rounds(std::size_t n);

// One pair's measurement (busbw nullopt when it gave no figure; error: why).
using FabricMeasure = FabricPairResult;

struct FabricPolicy {
  double min_busbw_ratio = 0.6;  // of the median pair
};

struct FabricNodeVerdict {
  std::string node;
  bool passed = true;
  std::string reason;  // the figures either way
  std::optional<double> best_busbw_gb_s;
  int pairings = 0;
};

struct FabricPairVerdict {
  std::string a;
  std::string b;
  std::optional<double> busbw_gb_s;
  std::string reason;  // "alpha-n5 <-> alpha-n6: 12.1 GB/s, 30% of the median pair (40.3 GB/s)"
};

struct FabricVerdict {
  std::optional<double> median_gb_s;          // nullopt: no pair gave a figure
  std::vector<FabricNodeVerdict> nodes;       // one per node of `nodes`, in that order
  std::vector<FabricPairVerdict> slow_pairs;  // slow alone (neither node is slow)
};

FabricVerdict judge_fabric(const std::vector<std::string>& nodes,
                           const std::vector<FabricMeasure>& measures, const FabricPolicy& policy);

}  // namespace orch
