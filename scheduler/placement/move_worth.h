#pragma once
// Moving for what it is worth (issue 38, item 3), pure: the useful work a job can expect over
// the rest of its run on each cluster, counting what it costs to get there and what it may
// learn there.
//
// Over the job's horizon H (what is left of its run), on cluster c with expected useful FLOP/s
// per unit of MFU a_c (gpus x peak x expected ETTR) and a move-in cost of m_c seconds (copying
// its data and checkpoint there; 0 where it ran last):
//
//   known MFU mu_c:       W_c = a_c mu_c H^2 / (H + m_c)   (~ a_c mu_c (H - m_c), never 0)
//   uncertain MFU ~ N(mu_c, sd_c), when the trial T = min(H, its MTBF there) outlasts the copy
//   and ends before the run does (else as if known): the job runs there for the trial,
//   at mu_c on average, and then either stays (at what it measured) or goes back to the best
//   other cluster b (paying the copy again):
//                         W_c = a_c mu_c (T - m_c) + E[max(a_c x (H - T), K)]
//                         K   = max over measured b of a_b mu_b (H - T - m_back)
//
// E[max(X, K)] is the expected-improvement term of Bayesian optimisation: a cluster never
// measured (sd = the prior's spread), or measured long ago (sd grows with the measurement's age),
// is worth a trial only while the chance it is better, times the rest of the run, outweighs
// the trial's expected loss and the moves. A resumed job moves when another cluster's W exceeds
// its own cluster's: no fixed ratio. Late in a run the horizon shrinks, and so does exploring.

#include <cstddef>
#include <optional>
#include <vector>

namespace orch {

struct ClusterOutlook {
  double flops_per_mfu = 0;  // a_c: gpus x peak x expected ETTR (0: peak unknown)
  double mfu_mean = 0;       // mu_c: measured (work over time), else the prior
  double mfu_sd = 0;         // 0: measured and fresh
  double trial_s = 0;        // the job's MTBF there: how long until it is placed again
  double move_in_s = 0;      // copying its data and checkpoint there (0 where it ran last)
  bool feasible = true;      // an infeasible cluster is neither scored nor a fallback
  // Measured at all (however long ago): only a measured cluster is a fallback K, so a fleet that
  // has measured nothing compares its clusters by their means, not by imagined trials.
  bool measured = true;
};

// What is left of the job's run after ran_s, at least a day: its spec's expected_run minus what
// it ran (overrun: a day); not said, as long again as it has run so far: a run of three weeks is
// not judged on its first hour.
inline constexpr double kMinHorizonS = 86400.0;
double remaining_horizon_s(double ran_s, std::optional<double> expected_run_s = std::nullopt);

// The share of the horizon a move of move_s seconds leaves for training, as work-seconds:
// horizon^2 / (horizon + move_s), first-order horizon - move_s, and never 0.
double after_move(double horizon_s, double move_s);

// E[max(x, k)] for x ~ N(mean, sd); max(mean, k) when sd is 0.
double expected_max(double mean, double sd, double k);

// W_c for each cluster, in FLOP (0 for an infeasible one). `current`: the index of the cluster
// the job ran on last (its move_in_s 0, as the outlook's contract says), which a move back from
// another pays that other's copy to reach.
std::vector<double> expected_work(const std::vector<ClusterOutlook>& clusters, double horizon_s,
                                  std::optional<std::size_t> current);

}  // namespace orch
