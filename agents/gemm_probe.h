#pragma once
// The compute probe: a single-threaded, cache-blocked float matrix multiply on the CPU, timed in
// short rounds. It tells a node whose CPU is throttled, oversubscribed or broken from a healthy
// one; it is not a peak-FLOPs benchmark. This file is compiled with -O2 even in debug builds so
// that it measures the machine, not the build type.

#include <string>

#include "agents/probe_check.h"

namespace orch::agent {

struct GemmProbe {
  double gflops = 0;  // the best round's rate: short interference cannot lower a best-of-N
  int n = 0;          // matrices are n x n
  int rounds = 0;
};

// Multiplies n x n matrices (n rounded up to a multiple of 48) for about `seconds`, in rounds of
// about 0.1 s (at least one).
GemmProbe run_cpu_gemm(double seconds, int n = 192);

// "compute": fails only when the rate is zero or not a number (the multiply did not run or the
// clock is broken); how fast is fast enough is the scheduler's judgement across nodes.
Check compute_check(const GemmProbe& probe);

}  // namespace orch::agent
