// The checkpoint planner on the exact renewal formula (checkpoint_plan.h).
#include "scheduler/health/checkpoint_plan.h"

#include <algorithm>

#include "scheduler/health/renewal.h"

namespace orch {

CheckpointPlan plan_checkpoints(const GoodputEstimate& e, const ClusterHistory& history,
                                const GoodputPriors& priors) {
  CheckpointPlan p;
  p.young_interval_s = young_interval_s(e.checkpoint_cost_s, e.job_mtbf_s);
  p.interval_s = renewal_interval_s(e.checkpoint_cost_s, e.job_mtbf_s);
  if (p.interval_s > 0) {
    p.ettr = renewal_ettr(e.checkpoint_cost_s, p.interval_s, e.restart_s, e.job_mtbf_s);
    p.ettr_first_order =
        expected_ettr(e.checkpoint_cost_s, p.interval_s, e.restart_s, e.job_mtbf_s);
    for (double f : {0.25, 0.5, 1.0, 2.0, 4.0}) {
      const double at = p.interval_s * f;
      p.around.push_back({at, renewal_ettr(e.checkpoint_cost_s, at, e.restart_s, e.job_mtbf_s),
                          expected_ettr(e.checkpoint_cost_s, at, e.restart_s, e.job_mtbf_s)});
    }
  }
  p.evidence_node_hours = std::max(history.node_hours, 0.0);
  p.node_failures = std::max(history.node_failures, 0);
  p.prior_node_hours = std::max(priors.prior_node_hours, 0.0);
  const double weight = p.prior_node_hours + p.evidence_node_hours;
  p.prior_share = weight > 0 ? p.prior_node_hours / weight : 1;
  p.mtbf_basis = p.evidence_node_hours <= 0 ? "prior"
                 : p.prior_share > 0.5      ? "mostly prior"
                                            : "measured";
  return p;
}

}  // namespace orch
