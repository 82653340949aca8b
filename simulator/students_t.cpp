// Student's t quantiles (students_t.h).
#include "simulator/students_t.h"

#include <boost/math/distributions/students_t.hpp>

namespace orch::sim {

double students_t_quantile(double p, std::size_t df) {
  return boost::math::quantile(
      boost::math::students_t_distribution<double>(static_cast<double>(df)), p);
}

double t95(std::size_t df) {
  if (df == 0) return 0;
  return students_t_quantile(0.975, df);
}

}  // namespace orch::sim
