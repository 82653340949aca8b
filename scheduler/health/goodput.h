#pragma once
// Expected goodput of a job on a cluster, pure (docs/architecture.md, "Formulas"):
//   useful FLOP/s = gpus x peak x expected MFU x expected ETTR
//   ETTR ~ 1 - C/tau - (tau/2 + R)/M      (clamped to [0, 1])
//   tau* = sqrt(2 C M)                    (Young's checkpoint interval)
// with C the blocking cost of one checkpoint, R the restart time, M the job's MTBF (the node
// MTBF divided by its node count). A new cluster has no history: priors stand in, and observed
// node-hours pull the MTBF from the prior towards the measured one.

#include <optional>

namespace orch {

// What the store knows of one cluster (filled by the brain, see brain/cluster_history.h).
struct ClusterHistory {
  std::optional<double> median_mfu;         // over attempts that reported MFU
  double node_hours = 0;                    // node-hours observed under attempts
  int node_failures = 0;                    // infra failures implicated in a node in that time
  std::optional<double> checkpoint_cost_s;  // median save time of checkpoints there
  std::optional<double> restart_s;  // median detection + median recovery there (scorecard.h)
};

struct GoodputPriors {
  double mfu = 0.35;              // MFU a cluster with no history is assumed to reach
  double node_mtbf_h = 2000;      // per node, before any history
  double prior_node_hours = 500;  // weight of the MTBF prior, in node-hours of evidence
  double checkpoint_cost_s = 60;
  double restart_s = 300;
};

struct GoodputEstimate {
  double expected_mfu = 0;
  double node_mtbf_s = 0;
  double job_mtbf_s = 0;
  double checkpoint_cost_s = 0;
  double restart_s = 0;
  double interval_s = 0;  // Young's tau*
  double ettr = 0;
  double flops = 0;  // expected useful FLOP/s (minus nothing: staging is separate)
  double staging_s = 0;
};

// 0 when the cost or the MTBF is not positive.
double young_interval_s(double checkpoint_cost_s, double mtbf_s);
// Clamped to [0, 1]; 0 for a non-positive MTBF. A free checkpoint (cost 0) with interval 0 is
// one taken continuously: only the restart is lost.
double expected_ettr(double checkpoint_cost_s, double interval_s, double restart_s, double mtbf_s);

// nodes, gpus: the job's size; peak_flops_per_gpu: the cluster's accelerator peak (FLOP/s).
// Node MTBF (h) = (prior_node_hours + node_hours) / (prior_node_hours / node_mtbf_h +
// node_failures): the prior counts as that many node-hours of evidence at its own failure rate.
// Job MTBF = node MTBF / nodes. MFU, C and R are the history's when known, else the priors'.
GoodputEstimate estimate_goodput(int nodes, int gpus, double peak_flops_per_gpu,
                                 const ClusterHistory& history, const GoodputPriors& priors = {});

}  // namespace orch
