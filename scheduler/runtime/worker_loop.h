#pragma once
// The thread every worker runs on (site, storage, transfer): a round at once, then again after
// `interval` or as soon as it is woken (the brain wrote new actions), until stopped.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace orch {

class WorkerLoop {
 public:
  WorkerLoop() = default;
  ~WorkerLoop() { stop(); }
  WorkerLoop(const WorkerLoop&) = delete;
  WorkerLoop& operator=(const WorkerLoop&) = delete;

  void start(std::function<void()> round, std::chrono::milliseconds interval) {
    thread_ = std::thread([this, round = std::move(round), interval] {
      for (;;) {
        round();
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait_for(lock, interval, [&] { return stopping_ || woken_; });
        if (stopping_) return;
        woken_ = false;
      }
    });
  }
  // Ends the loop after the round in progress and joins it. Idempotent.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void wake() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      woken_ = true;
    }
    cv_.notify_one();
  }
  // True once stop() was called (a long round may check it to end early).
  bool stopping() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stopping_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace orch
