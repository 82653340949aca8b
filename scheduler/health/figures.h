#pragma once
// How health verdicts print and summarise measurements, one way for every rule: three
// significant figures without exponents ("0.00604", "41.2", "712"), whole percents, medians.
// A rule's .cpp takes what it uses (`using figures::figure;`).

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace orch::figures {

// Three significant figures without exponents for the sizes probes report.
inline std::string figure(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : "%.3g", v);
  return buf;
}

// 0.583 -> "58%".
inline std::string percent(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", ratio * 100);
  return buf;
}

// The median (the mean of the middle two for an even count); none for no values.
inline std::optional<double> median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

}  // namespace orch::figures
