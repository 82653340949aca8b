#pragma once
// Part of SshSession's implementation (see ssh_session_impl.h); nothing else includes it.
//
// After connecting, every SshSession call runs under a Watchdog. Blocking libssh calls wait up
// to the session's timeout option per wait, and sftp_read loops on ssh_channel_read for as long
// as it returns 0 (on a silent network: forever), so timeouts alone cannot keep a deadline.

#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace orch::ssh_detail {

using Clock = std::chrono::steady_clock;

// Shuts a socket down when a deadline passes, so that a libssh call blocked on it returns.
class Watchdog {
 public:
  Watchdog() : thread_([this] { run(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(int fd, Clock::time_point deadline) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      fd_ = fd;
      deadline_ = deadline;
      armed_ = fd >= 0;
      fired_ = false;
    }
    cv_.notify_all();
  }
  // Returns whether it fired since arm().
  bool disarm() {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = false;
    fd_ = -1;
    return fired_;
  }
  bool fired() const {
    std::lock_guard<std::mutex> lock(mu_);
    return fired_;
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!quit_) {
      if (!armed_) {
        cv_.wait(lock);
        continue;
      }
      const auto deadline = deadline_;
      cv_.wait_until(lock, deadline);
      if (armed_ && !quit_ && deadline_ == deadline && Clock::now() >= deadline) {
        ::shutdown(fd_, SHUT_RDWR);
        fired_ = true;
        armed_ = false;
      }
    }
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  int fd_ = -1;
  Clock::time_point deadline_;
  bool armed_ = false;
  bool fired_ = false;
  bool quit_ = false;
  std::thread thread_;  // last: starts after the members it reads
};

}  // namespace orch::ssh_detail
