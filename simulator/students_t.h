#pragma once
// Student's t quantiles for the report's confidence intervals, from Boost.Math
// (boost::math::students_t), instead of a hand-typed table.

#include <cstddef>

namespace orch::sim {

// The p quantile of Student's t with df degrees of freedom (df >= 1, 0 < p < 1): the t with
// P(T <= t) = p.
double students_t_quantile(double p, std::size_t df);

// The multiplier of a two-sided 95% interval, t(0.975, df), exact (a printed table's 4.303 for df
// 2 is 4.30265...); 0 for df 0 (one value has no interval).
double t95(std::size_t df);

}  // namespace orch::sim
