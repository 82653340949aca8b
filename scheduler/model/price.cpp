#include "scheduler/model/price.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace orch {
namespace {

constexpr Millis kMinuteMs = 60'000;
constexpr Millis kDayMs = 86'400'000;
constexpr double kHourMs = 3'600'000.0;

// Floor division, so instants before 1970 still land in the right day.
Millis floor_div(Millis a, Millis b) {
  Millis q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

bool window_covers(const PriceWindow& w, int minute) {
  if (w.from_min <= w.to_min) return minute >= w.from_min && minute < w.to_min;
  return minute >= w.from_min || minute < w.to_min;  // wraps midnight
}

// Minutes of the UTC day where the price may change: midnight, every window's edges, 24:00.
std::vector<int> day_edges(const PriceSpec& price) {
  std::vector<int> edges{0, 1440};
  for (const auto& w : price.windows) {
    edges.push_back(std::clamp(w.from_min, 0, 1440));
    edges.push_back(std::clamp(w.to_min, 0, 1440));
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  return edges;
}

std::chrono::year_month_day civil_of(Millis at_ms) {
  using namespace std::chrono;
  return year_month_day{sys_days{days{floor_div(at_ms, kDayMs)}}};
}

Millis ms_of(std::chrono::year_month_day ymd) {
  using namespace std::chrono;
  return static_cast<Millis>(sys_days{ymd}.time_since_epoch().count()) * kDayMs;
}

}  // namespace

double price_at(const PriceSpec& price, Millis at_ms) {
  if (!price.configured) return 0;
  const int minute =
      static_cast<int>(floor_div(at_ms - floor_div(at_ms, kDayMs) * kDayMs, kMinuteMs));
  for (const auto& w : price.windows) {
    if (window_covers(w, minute)) return w.per_gpu_hour;
  }
  return price.per_gpu_hour;
}

double cost_of(const PriceSpec& price, Millis from_ms, Millis to_ms, int gpus) {
  if (!price.configured || to_ms <= from_ms || gpus <= 0) return 0;
  if (price.windows.empty()) {
    return price.per_gpu_hour * static_cast<double>(to_ms - from_ms) / kHourMs * gpus;
  }
  const std::vector<int> edges = day_edges(price);
  double gpu_money_ms = 0;  // price x milliseconds, for one GPU
  for (Millis day = floor_div(from_ms, kDayMs) * kDayMs; day < to_ms; day += kDayMs) {
    for (std::size_t i = 0; i + 1 < edges.size(); ++i) {
      const Millis seg_from = std::max(from_ms, day + edges[i] * kMinuteMs);
      const Millis seg_to = std::min(to_ms, day + edges[i + 1] * kMinuteMs);
      if (seg_to <= seg_from) continue;
      gpu_money_ms += price_at(price, seg_from) * static_cast<double>(seg_to - seg_from);
    }
  }
  return gpu_money_ms / kHourMs * gpus;
}

double committed_cost(const PriceSpec& price, int total_gpus, Millis from_ms, Millis to_ms) {
  if (!price.contract_start_ms || !price.contract_end_ms) return 0;
  return cost_of(price, std::max(from_ms, *price.contract_start_ms),
                 std::min(to_ms, *price.contract_end_ms), total_gpus);
}

std::string month_of(Millis at_ms) {
  const auto ymd = civil_of(at_ms);
  char text[16];
  std::snprintf(text, sizeof text, "%04d-%02u", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()));
  return text;
}

Millis month_start_ms(Millis at_ms) {
  const auto ymd = civil_of(at_ms);
  return ms_of(ymd.year() / ymd.month() / std::chrono::day{1});
}

Millis next_month_start_ms(Millis at_ms) {
  const auto ymd = civil_of(at_ms);
  const auto next = std::chrono::year_month{ymd.year(), ymd.month()} + std::chrono::months{1};
  return ms_of(next / std::chrono::day{1});
}

}  // namespace orch
