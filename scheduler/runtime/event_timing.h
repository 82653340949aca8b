#pragma once
// A histogram of durations with fixed bucket bounds, safe to observe from one thread and read
// from others (the brain loop times each event; /metrics reads it). Prometheus's shape:
// cumulative counts per upper bound, the sum and the count.

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

namespace orch {

class DurationHistogram {
 public:
  // Upper bounds in seconds, ascending; +Inf is implied.
  static constexpr std::array<double, 12> kBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                     0.05,   0.1,   0.25,   0.5,   1.0,  2.5};

  void observe(double seconds) {
    std::size_t i = 0;
    while (i < kBounds.size() && seconds > kBounds[i]) ++i;
    counts_[i].fetch_add(1, std::memory_order_relaxed);
    sum_micros_.fetch_add(static_cast<std::uint64_t>(seconds * 1e6), std::memory_order_relaxed);
  }

  struct Snapshot {
    std::vector<double> bounds;             // kBounds
    std::vector<std::uint64_t> cumulative;  // per bound, then +Inf (== count)
    double sum_seconds = 0;
    std::uint64_t count = 0;
  };

  Snapshot snapshot() const {
    Snapshot s;
    s.bounds.assign(kBounds.begin(), kBounds.end());
    std::uint64_t running = 0;
    for (const auto& c : counts_) {
      running += c.load(std::memory_order_relaxed);
      s.cumulative.push_back(running);
    }
    s.count = running;
    s.sum_seconds = static_cast<double>(sum_micros_.load(std::memory_order_relaxed)) / 1e6;
    return s;
  }

 private:
  std::array<std::atomic<std::uint64_t>, kBounds.size() + 1> counts_{};
  std::atomic<std::uint64_t> sum_micros_{0};
};

}  // namespace orch
