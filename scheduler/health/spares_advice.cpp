#include "scheduler/health/spares_advice.h"

#include <cmath>

namespace orch {

SparesAdvice advise_spares(double job_mtbf_s, int job_gpus, int gpus_per_node, double saved_s,
                           double refill_s, int max_spares) {
  SparesAdvice out;
  if (!(job_mtbf_s > 0) || !(saved_s > 0) || !(refill_s > 0) || job_gpus <= 0 ||
      gpus_per_node <= 0 || max_spares < 0) {
    return out;
  }
  constexpr double kDay = 86400;
  out.failures_per_day = kDay / job_mtbf_s;
  const double away = refill_s / job_mtbf_s;  // mean spares being replaced
  const double gain_per_failure_gpu_h = saved_s * job_gpus / 3600;
  double below = 0;               // P(Poisson(away) < s)
  double term = std::exp(-away);  // P(Poisson(away) = s)
  double best = 0;
  for (int s = 0; s <= max_spares; ++s) {
    SparesOption o;
    o.spares = s;
    o.covered = below;
    o.gained_gpu_h_per_day = out.failures_per_day * below * gain_per_failure_gpu_h;
    o.paid_gpu_h_per_day = static_cast<double>(s) * gpus_per_node * 24;
    o.net_gpu_h_per_day = o.gained_gpu_h_per_day - o.paid_gpu_h_per_day;
    if (o.net_gpu_h_per_day > best) {
      best = o.net_gpu_h_per_day;
      out.recommended = s;
    }
    out.options.push_back(o);
    below += term;
    term *= away / (s + 1);
  }
  return out;
}

}  // namespace orch
