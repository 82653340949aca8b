#include "testkit/fake_kube/cpu_throttle.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace orch::fake_kube {
namespace {

constexpr std::chrono::microseconds kPeriod{50000};

}  // namespace

CpuThrottle::~CpuThrottle() {
  stop();
}

void CpuThrottle::add(pid_t pid, double share) {
  std::lock_guard lock(mu_);
  if (stopping_) return;
  shares_[pid] = std::clamp(share, 0.01, 1.0);
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
}

void CpuThrottle::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  for (const auto& [pid, share] : shares_) ::kill(-pid, SIGCONT);
  shares_.clear();
}

void CpuThrottle::loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::pair<double, pid_t>> order;
    for (auto it = shares_.begin(); it != shares_.end();) {
      if (::kill(-it->first, SIGCONT) != 0) {  // the group is gone
        it = shares_.erase(it);
        continue;
      }
      order.emplace_back(it->second, it->first);
      ++it;
    }
    std::sort(order.begin(), order.end());
    for (const auto& [share, pid] : order) {
      const auto stop_at =
          start + std::chrono::duration_cast<std::chrono::microseconds>(kPeriod * share);
      if (cv_.wait_until(lock, stop_at, [this] { return stopping_; })) return;
      ::kill(-pid, SIGSTOP);
    }
    if (cv_.wait_until(lock, start + kPeriod, [this] { return stopping_; })) return;
  }
}

}  // namespace orch::fake_kube
