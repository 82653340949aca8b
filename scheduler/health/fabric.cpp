// The fabric's pairing schedule and its judgement (fabric.h).
#include "scheduler/health/fabric.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "scheduler/health/figures.h"

namespace orch {
namespace {

using figures::percent;

std::string gb_s(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f GB/s", v);
  return buf;
}

// The tournament's length for n nodes.
int tournament_rounds(std::size_t n) {
  if (n < 2) return 0;
  return static_cast<int>(n % 2 ? n : n - 1);
}

bool is_slow(const FabricMeasure& m, double threshold) {
  return !m.error.empty() || !m.busbw_gb_s || *m.busbw_gb_s < threshold;
}

// "12.1 GB/s" or "failed: <why>".
std::string measure_text(const FabricMeasure& m) {
  if (m.busbw_gb_s && m.error.empty()) return gb_s(*m.busbw_gb_s);
  return "failed" + (m.error.empty() ? std::string() : ": " + m.error);
}

std::string against_median(const FabricMeasure& m, double median) {
  if (m.busbw_gb_s && m.error.empty() && median > 0) {
    return gb_s(*m.busbw_gb_s) + ", " + percent(*m.busbw_gb_s / median) + " of the median pair (" +
           gb_s(median) + ")";
  }
  return measure_text(m) + " (the median pair: " + gb_s(median) + ")";
}

FabricNodeVerdict judge_node(const std::string& node, const std::vector<const FabricMeasure*>& mine,
                             double median, double threshold) {
  FabricNodeVerdict v{node, true, "", std::nullopt, static_cast<int>(mine.size())};
  if (mine.empty()) {
    v.reason = "fabric: no pairing measured";
    return v;
  }
  std::string list;
  bool all_slow = true;
  for (const FabricMeasure* m : mine) {
    const std::string& other = m->a == node ? m->b : m->a;
    list += (list.empty() ? "" : ", ") + other + " " + measure_text(*m);
    if (!is_slow(*m, threshold)) all_slow = false;
    if (m->busbw_gb_s && m->error.empty()) {
      v.best_busbw_gb_s = std::max(v.best_busbw_gb_s.value_or(0), *m->busbw_gb_s);
    }
  }
  v.passed = !all_slow;
  const std::string best = v.best_busbw_gb_s ? gb_s(*v.best_busbw_gb_s) : "no figure";
  std::string ratio;
  if (v.best_busbw_gb_s && median > 0) ratio = ", " + percent(*v.best_busbw_gb_s / median);
  v.reason = std::string(all_slow ? "fabric: every pairing slow, best " : "fabric: best ") + best +
             ratio + " of the median pair (" + gb_s(median) + ") over " +
             std::to_string(mine.size()) + " pairing(s): " + list;
  return v;
}

}  // namespace

int default_fabric_rounds(std::size_t n) {
  const int most = tournament_rounds(n);
  int r = 0;
  while ((std::size_t{1} << r) < n) ++r;
  return std::min(std::max(r, 2), most);
}

std::vector<FabricRound> fabric_schedule(const std::vector<std::string>& nodes, int rounds) {
  const std::size_t n = nodes.size();
  const int most = tournament_rounds(n);
  const int count = std::min(rounds > 0 ? rounds : default_fabric_rounds(n), most);
  // The circle method over N = n rounded up to even (index n is "sits out"): position 0 stays,
  // the others turn one place per round; position k meets position N - 1 - k.
  const std::size_t N = n % 2 ? n + 1 : n;
  std::vector<FabricRound> out;
  for (int r = 0; r < count; ++r) {
    auto at = [&](std::size_t k) {
      return k == 0 ? 0 : (k - 1 + static_cast<std::size_t>(r)) % (N - 1) + 1;
    };
    FabricRound round;
    for (std::size_t k = 0; k < N / 2; ++k) {
      std::size_t x = at(k), y = at(N - 1 - k);
      if (x >= n || y >= n) continue;
      if (x > y) std::swap(x, y);
      round.emplace_back(nodes[x], nodes[y]);
    }
    out.push_back(std::move(round));
  }
  return out;
}

FabricVerdict judge_fabric(const std::vector<std::string>& nodes,
                           const std::vector<FabricMeasure>& measures, const FabricPolicy& policy) {
  FabricVerdict out;
  std::vector<double> busbw;
  for (const auto& m : measures) {
    if (m.busbw_gb_s && m.error.empty()) busbw.push_back(*m.busbw_gb_s);
  }
  out.median_gb_s = figures::median(busbw);
  const double median = out.median_gb_s.value_or(0);
  const double threshold = policy.min_busbw_ratio * median;
  std::map<std::string, std::vector<const FabricMeasure*>> by_node;
  for (const auto& m : measures) {
    by_node[m.a].push_back(&m);
    by_node[m.b].push_back(&m);
  }
  std::map<std::string, bool> slow_node;
  for (const auto& node : nodes) {
    out.nodes.push_back(judge_node(node, by_node[node], median, threshold));
    slow_node[node] = !out.nodes.back().passed;
  }
  for (const auto& m : measures) {
    if (!is_slow(m, threshold) || slow_node[m.a] || slow_node[m.b]) continue;
    out.slow_pairs.push_back(
        {m.a, m.b, m.busbw_gb_s, m.a + " <-> " + m.b + ": " + against_median(m, median)});
  }
  return out;
}

}  // namespace orch
