#pragma once
// How many hot spares a job should hold (issue 38, item 2): nodes held idle and burned in, so a
// gang that loses a node relaunches on its survivors and a spare at once instead of waiting for
// the site to grant a node. Pure arithmetic, for `orchestrate plan`.
//
// Failures of the job arrive at rate 1/job_mtbf. A spare used is replaced refill_s later (the
// site grants a node, which is burned in), so the spares away at any moment are Poisson with
// mean a = refill_s / job_mtbf (an M/G/infinity queue); a failure finds one of `s` spares held
// with probability P(Poisson(a) < s). Each failure that finds one saves saved_s of the whole
// gang's time; each spare costs its GPUs all day. The advice is the count with the most net
// GPU-hours a day (ties: fewer spares), at most max_spares.

#include <vector>

namespace orch {

struct SparesOption {
  int spares = 0;
  double covered = 0;               // share of failures that find a spare
  double gained_gpu_h_per_day = 0;  // the gang's GPU-hours a day not spent waiting
  double paid_gpu_h_per_day = 0;    // the spares' GPU-hours a day, idle
  double net_gpu_h_per_day = 0;     // gained - paid
};

struct SparesAdvice {
  int recommended = 0;
  double failures_per_day = 0;
  std::vector<SparesOption> options;  // 0 .. max_spares spares
};

// What `orchestrate plan` assumes until spares are measured: a relaunch onto a held spare takes
// the job's own start only (kHotRestartS, the simulator's llama3-tiered figure), so it saves the
// cluster's restart less that; a used spare is replaced in a restart plus a burn-in
// (kSpareBurnInS).
inline constexpr double kHotRestartS = 30;
inline constexpr double kSpareBurnInS = 600;

// job_mtbf_s, saved_s, refill_s > 0 and gpus > 0 give options; otherwise none (recommended 0).
SparesAdvice advise_spares(double job_mtbf_s, int job_gpus, int gpus_per_node, double saved_s,
                           double refill_s, int max_spares = 8);

}  // namespace orch
