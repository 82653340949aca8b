// See gemm_probe.h.
#include "agents/gemm_probe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "agents/agent_clock.h"

namespace orch::agent {
namespace {

constexpr int kBlock = 48;
constexpr double kRoundSeconds = 0.1;

// C += A * B, all n x n row-major with n a multiple of kBlock, in kBlock tiles so the working
// set stays in L1/L2. The inner loop has a constant trip count along rows of B and C, which the
// compiler vectorises at -O2 (a variable count would need an epilogue its cheap model declines).
void matmul(const float* __restrict a, const float* __restrict b, float* __restrict c, int n) {
  for (int ii = 0; ii < n; ii += kBlock) {
    for (int kk = 0; kk < n; kk += kBlock) {
      for (int jj = 0; jj < n; jj += kBlock) {
        for (int i = ii; i < ii + kBlock; ++i) {
          float* __restrict crow = c + static_cast<size_t>(i) * n + jj;
          for (int k = kk; k < kk + kBlock; ++k) {
            const float aik = a[static_cast<size_t>(i) * n + k];
            const float* __restrict brow = b + static_cast<size_t>(k) * n + jj;
            for (int j = 0; j < kBlock; ++j) crow[j] += aik * brow[j];
          }
        }
      }
    }
  }
}

}  // namespace

GemmProbe run_cpu_gemm(double seconds, int n) {
  GemmProbe probe;
  n = std::max(kBlock, (n + kBlock - 1) / kBlock * kBlock);
  probe.n = n;
  const size_t cells = static_cast<size_t>(n) * n;
  std::vector<float> a(cells), b(cells), c(cells, 0.0f);
  for (size_t i = 0; i < cells; ++i) {
    a[i] = static_cast<float>((i * 7) % 13) / 13.0f - 0.5f;
    b[i] = static_cast<float>((i * 5) % 11) / 11.0f - 0.5f;
  }
  const double flops_per_multiply = 2.0 * n * n * static_cast<double>(n);
  const int rounds = std::max(1, static_cast<int>(std::lround(seconds / kRoundSeconds)));
  for (int r = 0; r < rounds; ++r) {
    const double t0 = steady_seconds();
    double elapsed = 0;
    long multiplies = 0;
    do {
      matmul(a.data(), b.data(), c.data(), n);
      ++multiplies;
      elapsed = steady_seconds() - t0;
    } while (elapsed < kRoundSeconds);
    probe.gflops = std::max(probe.gflops,
                            static_cast<double>(multiplies) * flops_per_multiply / elapsed / 1e9);
    ++probe.rounds;
  }
  // Reading a result keeps the compiler from dropping the work.
  volatile float sink = c[cells / 2];
  (void)sink;
  return probe;
}

Check compute_check(const GemmProbe& probe) {
  Check check{"compute", probe.gflops > 0 && std::isfinite(probe.gflops), ""};
  char buf[160];
  std::snprintf(buf, sizeof buf, "CPU GEMM %dx%d: %.2f GFLOP/s (best of %d rounds)", probe.n,
                probe.n, probe.gflops, probe.rounds);
  check.detail = buf;
  if (!check.ok) check.detail += ": the multiply did not run or the clock is broken";
  return check;
}

}  // namespace orch::agent
