// See torch_judge.h.
#include "scheduler/health/torch_judge.h"

#include <algorithm>

#include "scheduler/health/figures.h"

namespace orch {
namespace {

using figures::figure;
using figures::median;
using figures::percent;

// Median of at least two values (one has nothing to be compared with); none otherwise.
std::optional<double> median_of(const std::vector<double>& v) {
  return v.size() >= 2 ? median(v) : std::nullopt;
}

std::optional<double> find(const std::map<std::string, double>& m, const std::string& device) {
  auto it = m.find(device);
  if (it == m.end() || it->second <= 0) return std::nullopt;
  return it->second;
}

// "698-712" (or "705" when they print the same).
std::string span(std::vector<double> v) {
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return figure(*lo) == figure(*hi) ? figure(*lo) : figure(*lo) + "-" + figure(*hi);
}

struct Measure {
  const char* what;  // "" for TFLOPS ("gpu 3: 412 TFLOPS"), "copy " for bandwidth
  const char* unit;  // "TFLOPS", "GB/s"
};

// Appends a failure when value / reference < min_ratio.
void compare(const std::string& label, const Measure& m, double value, double reference,
             const char* of, double min_ratio, std::vector<std::string>& failures) {
  const double ratio = value / reference;
  if (ratio >= min_ratio) return;
  failures.push_back(label + ": " + m.what + figure(value) + " " + m.unit + ", " + percent(ratio) +
                     " of the " + of + " (" + figure(reference) + ")");
}

}  // namespace

TorchMedians torch_medians(const std::vector<const ProbeResult*>& results) {
  std::map<std::string, std::vector<double>> tflops, hbm, allreduce;
  for (const ProbeResult* r : results) {
    if (!r->torch) continue;
    const TorchReading& t = *r->torch;
    for (const TorchGpuReading& g : t.gpus) {
      if (g.tflops && *g.tflops > 0) tflops[t.device].push_back(*g.tflops);
      if (g.hbm_gb_s && *g.hbm_gb_s > 0) hbm[t.device].push_back(*g.hbm_gb_s);
    }
    if (t.allreduce_busbw_gb_s && *t.allreduce_busbw_gb_s > 0) {
      allreduce[t.device].push_back(*t.allreduce_busbw_gb_s);
    }
  }
  TorchMedians m;
  auto fill = [](const auto& by_device, std::map<std::string, double>& out) {
    for (const auto& [device, values] : by_device) {
      if (auto med = median_of(values)) out[device] = *med;
    }
  };
  fill(tflops, m.tflops);
  fill(hbm, m.hbm_gb_s);
  fill(allreduce, m.allreduce_gb_s);
  return m;
}

TorchVerdict judge_torch(const TorchReading& t, const TorchMedians& medians,
                         const TorchPolicy& policy) {
  TorchVerdict v;
  const auto tflops_median = find(medians.tflops, t.device);
  const auto hbm_median = find(medians.hbm_gb_s, t.device);
  const auto allreduce_median = find(medians.allreduce_gb_s, t.device);
  const bool datasheet = t.device == "cuda" && policy.peak_flops && *policy.peak_flops > 0;
  const Measure gemm{"", "TFLOPS"}, copy{"copy ", "GB/s"};
  std::vector<double> tflops, hbm;
  for (const TorchGpuReading& g : t.gpus) {
    const std::string label = t.device == "cuda" ? "gpu " + std::to_string(g.index) : t.device;
    if (g.tflops && *g.tflops > 0) {
      tflops.push_back(*g.tflops);
      if (tflops_median) {
        compare(label, gemm, *g.tflops, *tflops_median, "median", policy.min_tflops_ratio,
                v.failures);
      }
      if (datasheet) {
        compare(label, gemm, *g.tflops, *policy.peak_flops / 1e12, "datasheet peak",
                policy.min_datasheet_ratio, v.failures);
      }
    }
    if (g.hbm_gb_s && *g.hbm_gb_s > 0) {
      hbm.push_back(*g.hbm_gb_s);
      if (hbm_median) {
        compare(label, copy, *g.hbm_gb_s, *hbm_median, "median", policy.min_hbm_ratio, v.failures);
      }
    }
  }
  if (t.allreduce_busbw_gb_s && allreduce_median) {
    compare("all-reduce busbw", {"", "GB/s"}, *t.allreduce_busbw_gb_s, *allreduce_median, "median",
            policy.min_allreduce_ratio, v.failures);
  }
  // The figures, for a node that passed (and for people reading any verdict).
  v.figures = "torch " + t.device + ": " +
              (t.device == "cuda" ? std::to_string(t.gpus.size()) + " GPUs, " : "");
  std::vector<std::string> parts;
  auto with_median = [](std::string s, std::optional<double> med) {
    return med ? s + " (median " + figure(*med) + ")" : s;
  };
  if (!tflops.empty())
    parts.push_back(with_median("GEMM " + span(tflops) + " TFLOPS", tflops_median));
  if (!hbm.empty()) parts.push_back(with_median("copy " + span(hbm) + " GB/s", hbm_median));
  if (t.allreduce_busbw_gb_s) {
    parts.push_back(with_median("all-reduce busbw " + figure(*t.allreduce_busbw_gb_s) + " GB/s",
                                allreduce_median));
  }
  if (parts.empty()) parts.push_back("no figures");
  for (std::size_t i = 0; i < parts.size(); ++i) v.figures += (i ? ", " : "") + parts[i];
  return v;
}

}  // namespace orch
