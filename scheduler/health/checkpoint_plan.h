#pragma once
// The checkpoint planner (issue 19, made exact in issue 45): the interval that maximises the
// exact renewal ETTR (renewal.h) for a job's goodput estimate, Young's first-order interval
// beside it, the ETTR both formulas expect at a quarter, half, once, twice and four times the
// best interval, and what the MTBF stands on: how many node-hours of the cluster's own history
// against the prior's weight, so that advice that is mostly prior says so.

#include <string>
#include <vector>

#include "scheduler/health/goodput.h"

namespace orch {

struct PlanPoint {
  double interval_s = 0;
  double ettr = 0;              // renewal_ettr
  double ettr_first_order = 0;  // expected_ettr (goodput.h)
};

struct CheckpointPlan {
  double interval_s = 0;          // renewal_interval_s: the best; 0 when no cost or MTBF is known
  double young_interval_s = 0;    // sqrt(2 C M), the first-order optimum
  double ettr = 0;                // renewal ETTR at interval_s
  double ettr_first_order = 0;    // first-order ETTR at interval_s
  std::vector<PlanPoint> around;  // at 0.25, 0.5, 1, 2 and 4 x interval_s; empty without one
  // What the node MTBF stands on: "prior" (no node-hours observed), "mostly prior" (the prior
  // weighs more than the hours observed), "measured" (the history weighs more).
  std::string mtbf_basis;
  double evidence_node_hours = 0;  // node-hours observed on the cluster
  int node_failures = 0;           // failures implicated in a node in them
  double prior_node_hours = 0;     // the prior's weight (GoodputPriors::prior_node_hours)
  double prior_share = 1;          // prior / (prior + observed): how much of the MTBF is prior
};

// From the estimate (its C, R and job MTBF) and the history and priors it was made from.
CheckpointPlan plan_checkpoints(const GoodputEstimate& estimate, const ClusterHistory& history,
                                const GoodputPriors& priors = {});

}  // namespace orch
