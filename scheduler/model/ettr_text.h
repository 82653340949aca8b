#pragma once
// An ETTR as people read it (issue 42): three decimals, zeros kept ("0.990", "1.000"); a value
// below 1 never reads 1.000 (0.9995 is "0.999"), so a loss, however small, stays visible.

#include <algorithm>
#include <cstdio>
#include <string>

namespace orch {

inline std::string ettr_digits(double ettr) {
  const double v = std::clamp(ettr, 0.0, 1.0);
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%.3f", v < 1.0 ? std::min(v, 0.999) : v);
  return buffer;
}

}  // namespace orch
