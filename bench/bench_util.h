#pragma once
// What every benchmark here needs and nothing it measures: elapsed time, the statistics its
// tables print, and the machine's load. No dependencies beyond the standard library.

#include <chrono>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "scheduler/common/text.h"

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

// The first line of a message, for a table's footnote (scheduler/common/text.h).
using ::orch::first_line;
// The one-minute load average (/proc/loadavg); 0 when unreadable.
double load_average();

// One numeric flag of a benchmark, "--runs N": its value must be a number in [min, max] (and a
// whole one when `whole`); `set` receives it.
struct Flag {
  std::string name;   // "--runs"
  std::string value;  // "N", for the usage line
  std::string help;   // "crash-and-resume runs (default 5; 0 skips)"
  double min = 0;
  double max = 1e9;
  bool whole = true;
  std::function<void(double)> set;
};

// The usage text: "usage: PROGRAM [--runs N] ...", the summary, then one line per flag.
std::string usage_text(const std::string& program, const std::string& summary,
                       const std::vector<Flag>& flags);

// Every benchmark's argument parsing. --help or -h prints the usage on `out` and gives 0; an
// unknown flag, a missing value or a value out of range prints why and the usage on `err` and
// gives 2; otherwise every flag given is set and the result is nullopt: run the benchmark.
// main() returns the value when there is one, so `bench_x --help` never runs the benchmark.
std::optional<int> parse_flags(int argc, const char* const* argv, const std::string& program,
                               const std::string& summary, const std::vector<Flag>& flags,
                               std::ostream& out, std::ostream& err);
// The same on stdout and stderr.
std::optional<int> parse_flags(int argc, const char* const* argv, const std::string& program,
                               const std::string& summary, const std::vector<Flag>& flags);

}  // namespace orch::bench
