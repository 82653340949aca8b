#pragma once
// What every benchmark here needs and nothing it measures: elapsed time, the statistics its
// tables print, and the machine's load. No dependencies beyond the standard library.

#include <chrono>
#include <string>
#include <vector>

namespace orch::bench {

using SteadyClock = std::chrono::steady_clock;

// Seconds from t0 until now.
double seconds_since(SteadyClock::time_point t0);

// The median of v (the mean of the middle two when even); 0 when empty.
double median(std::vector<double> v);
// The largest of v; 0 when empty.
double max_of(const std::vector<double>& v);
// Nearest-rank percentile: with 5 samples p95 is the largest. 0 when empty.
double percentile(std::vector<double> v, double p);
double sum(const std::vector<double>& v);

// s up to its first newline.
std::string first_line(const std::string& s);
// The one-minute load average (/proc/loadavg); 0 when unreadable.
double load_average();

}  // namespace orch::bench
