#pragma once
// Expected goodput of a job on a cluster, pure (docs/architecture.md, "Formulas"):
//   useful FLOP/s = gpus x peak x expected MFU x expected ETTR
//   ETTR ~ 1 - C/tau - (tau/2 + R)/M      (clamped to [0, 1])
//   tau* = sqrt(2 C M)                    (Young's checkpoint interval)
// with C the blocking cost of one checkpoint, R the restart time, M the job's MTBF (the node
// MTBF divided by its node count). A new cluster has no history: priors stand in, and observed
// node-hours pull the MTBF from the prior towards the measured one.

#include <cstdint>
#include <optional>

namespace orch {

// What the store knows of one cluster (filled by the brain, see brain/cluster_history.h).
struct ClusterHistory {
  // Over attempts that reported MFU, work over time (scorecard.h, MfuOverTime).
  std::optional<double> mfu;
  double node_hours = 0;                    // node-hours observed under attempts
  int node_failures = 0;                    // infra failures implicated in a node in that time
  std::optional<double> checkpoint_cost_s;  // median save time of checkpoints there
  std::optional<double> restart_s;  // median detection + median recovery there (scorecard.h)
  // When its MFU was last measured (the latest end, or now for one running, of an attempt that
  // reported MFU): a measurement ages (move_worth.h). nullopt with an MFU: taken as fresh.
  std::optional<std::int64_t> mfu_measured_ms;
  // Hours of attempts that reported it: ten minutes of a run that failed early say less than a
  // day's (mfu_spread).
  double mfu_hours = 0;
};

struct GoodputPriors {
  double mfu = 0.35;  // MFU a cluster with no history is assumed to reach
  // How far a cluster's MFU may be from that: the hardware lottery's spread (0.30-0.55 on the
  // same H100s in the simulator's scenarios), what makes an unmeasured cluster worth a trial.
  double mfu_sd = 0.10;
  // How fast a measurement goes stale: its spread grows by this much per day of age (0.075
  // at the 30 days placement looks back, after which the cluster counts as unmeasured), so a
  // cluster measured long ago, and close to the best, is measured again when the rest of the
  // run could repay it.
  double mfu_drift_per_day = 0.0025;
  // How much one measurement says: its spread is mfu_sd x sqrt(h / (h + hours measured)), the
  // prior's after no time, half of it after 3 h, a tenth after 4 days.
  double mfu_evidence_h = 1;
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

// How uncertain the cluster's MFU is at now_ms: the prior's spread when it has none measured;
// else that of a measurement of mfu_hours (mfu_evidence_h) and that of its age (mfu_drift_per_day
// x days), added as variances, at most the prior's spread.
double mfu_spread(const ClusterHistory& history, std::int64_t now_ms,
                  const GoodputPriors& priors = {});

// What checkpoint advice from this history stands on (issue 42): "measured" when the cluster
// has a measured checkpoint save time and observed node-hours (its MTBF is partly measured),
// else "prior": the advice is the priors' (GoodputPriors), no measurement yet.
const char* advice_basis(const ClusterHistory& history);

// nodes, gpus: the job's size; peak_flops_per_gpu: the cluster's accelerator peak (FLOP/s).
// Node MTBF (h) = (prior_node_hours + node_hours) / (prior_node_hours / node_mtbf_h +
// node_failures): the prior counts as that many node-hours of evidence at its own failure rate.
// Job MTBF = node MTBF / nodes. MFU, C and R are the history's when known, else the priors'.
GoodputEstimate estimate_goodput(int nodes, int gpus, double peak_flops_per_gpu,
                                 const ClusterHistory& history, const GoodputPriors& priors = {});

}  // namespace orch
