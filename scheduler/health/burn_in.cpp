// Judging a burn-in round (burn_in.h): every node's checks, then its compute and filesystem
// throughput against the median of the nodes whose checks passed.
#include "scheduler/health/burn_in.h"
#include "scheduler/common/text.h"
#include "scheduler/health/figures.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

namespace orch {
namespace {

using figures::figure;
using figures::median;
using figures::percent;

bool checks_passed(const ProbeResult& r) {
  return r.ok &&
         std::all_of(r.checks.begin(), r.checks.end(), [](const ProbeCheck& c) { return c.ok; });
}

// "failed checks: gpu-ecc (2 uncorrectable), xid"; a result marked not ok without a failed check
// still fails, with the probe's word for it.
std::string failed_checks(const ProbeResult& r) {
  std::string out;
  for (const auto& c : r.checks) {
    if (c.ok) continue;
    out += out.empty() ? "failed checks: " : ", ";
    out += c.name;
    if (!c.detail.empty()) out += " (" + c.detail + ")";
  }
  return out.empty() ? "probe reported a failure" : out;
}

std::optional<double> io_figure(const ProbeResult& r) {
  if (r.write_mb_s && r.read_mb_s) return std::min(*r.write_mb_s, *r.read_mb_s);
  if (r.write_mb_s) return r.write_mb_s;
  return r.read_mb_s;
}

struct Measure {
  const char* name;  // "compute", "io"
  const char* unit;  // "GFLOP/s", "MB/s"
};

// Appends "compute 41% of the cluster median (3.1 vs 7.6 GFLOP/s)" and says whether it is
// below the policy's ratio. Without a median (nothing to compare) only the figure is shown.
bool judge_measure(const Measure& m, std::optional<double> value, std::optional<double> med,
                   double min_ratio, double& ratio_out, std::vector<std::string>& notes) {
  if (!value) return true;
  if (!med || *med <= 0) {
    notes.push_back(std::string(m.name) + " " + figure(*value) + " " + m.unit +
                    " (no other node to compare)");
    return true;
  }
  ratio_out = *value / *med;
  notes.push_back(std::string(m.name) + " " + percent(ratio_out) + " of the cluster median (" +
                  figure(*value) + " vs " + figure(*med) + " " + m.unit + ")");
  return ratio_out >= min_ratio;
}

}  // namespace

std::vector<NodeProbeVerdict> judge_burn_in(const std::vector<std::string>& expected_nodes,
                                            const std::vector<ProbeResult>& results,
                                            const BurnInPolicy& policy) {
  // The newest result of each node counts (a node probed twice in a round is judged once).
  std::map<std::string, const ProbeResult*> latest;
  for (const auto& r : results) {
    auto& slot = latest[r.node];
    if (!slot || r.at_ms >= slot->at_ms) slot = &r;
  }

  // Medians over the expected nodes whose checks passed. With fewer than two such nodes a
  // node would be compared with itself, which says nothing.
  std::vector<double> computes, ios;
  std::vector<const ProbeResult*> passed;
  for (const auto& n : expected_nodes) {
    auto it = latest.find(n);
    if (it == latest.end() || !checks_passed(*it->second)) continue;
    passed.push_back(it->second);
    if (it->second->gemm_gflops) computes.push_back(*it->second->gemm_gflops);
    if (auto io = io_figure(*it->second)) ios.push_back(*io);
  }
  const auto compute_median = computes.size() >= 2 ? median(computes) : std::nullopt;
  const auto io_median = ios.size() >= 2 ? median(ios) : std::nullopt;
  const TorchMedians torch_median = torch_medians(passed);

  std::vector<NodeProbeVerdict> out;
  out.reserve(expected_nodes.size());
  for (const auto& n : expected_nodes) {
    NodeProbeVerdict v;
    v.node = n;
    auto it = latest.find(n);
    if (it == latest.end()) {
      v.reason = "no probe result";
      out.push_back(std::move(v));
      continue;
    }
    const ProbeResult& r = *it->second;
    std::vector<std::string> failures, figures;
    if (!checks_passed(r)) failures.push_back(failed_checks(r));
    std::vector<std::string> compute_notes, io_notes;
    bool compute_ok = judge_measure({"compute", "GFLOP/s"}, r.gemm_gflops, compute_median,
                                    policy.min_compute_ratio, v.compute_ratio, compute_notes);
    bool io_ok = judge_measure({"io", "MB/s"}, io_figure(r), io_median, policy.min_io_ratio,
                               v.io_ratio, io_notes);
    for (auto& s : compute_notes) (compute_ok ? figures : failures).push_back(std::move(s));
    for (auto& s : io_notes) (io_ok ? figures : failures).push_back(std::move(s));
    if (r.torch) {
      TorchVerdict t = judge_torch(*r.torch, torch_median, policy.torch);
      failures.insert(failures.end(), t.failures.begin(), t.failures.end());
      if (t.failures.empty()) figures.push_back(t.figures);
    }
    v.passed = failures.empty();
    if (v.passed) {
      v.reason = figures.empty() ? "checks passed" : "checks passed; " + join(figures, "; ");
    } else {
      v.reason = join(failures, "; ");
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace orch
