// The exact renewal ETTR and its best interval (renewal.h).
#include "scheduler/health/renewal.h"

#include <algorithm>
#include <cmath>

namespace orch {

double renewal_ettr(double checkpoint_cost_s, double interval_s, double restart_s, double mtbf_s) {
  if (std::isnan(mtbf_s) || !(mtbf_s > 0)) return 0;
  const double cost = std::max(checkpoint_cost_s, 0.0);
  const double restart = std::max(restart_s, 0.0);
  const double tau = std::max(interval_s, 0.0);
  if (std::isinf(mtbf_s)) {
    if (std::isinf(tau) || tau + cost == 0) return 1;
    return tau / (tau + cost);
  }
  if (std::isinf(tau)) return 0;
  if (tau == 0) return cost > 0 ? 0 : std::exp(-restart / mtbf_s);
  // expm1 keeps the digits where (tau + C) is small against M.
  const double expected = mtbf_s * std::exp(restart / mtbf_s) * std::expm1((tau + cost) / mtbf_s);
  return std::clamp(tau / expected, 0.0, 1.0);
}

double renewal_interval_s(double checkpoint_cost_s, double mtbf_s) {
  if (!(checkpoint_cost_s > 0) || !(mtbf_s > 0)) return 0;
  if (std::isinf(mtbf_s)) return mtbf_s;
  // f(tau) = tau/M - 1 + e^(-(tau + C)/M) rises from e^(-C/M) - 1 < 0 at 0 to e^(-1-C/M) > 0
  // at M, and once: bisect.
  auto f = [&](double tau) {
    return tau / mtbf_s + std::expm1(-(tau + checkpoint_cost_s) / mtbf_s);
  };
  double lo = 0, hi = mtbf_s;
  for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (f(mid) < 0 ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace orch
