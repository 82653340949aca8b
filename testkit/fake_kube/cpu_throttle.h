#pragma once
// A slow node for burn-in tests: the processes of pods on a node with a CPU share below 1 are
// stopped (SIGSTOP to their process group) for the rest of every 50 ms period once they ran
// their share of it (SIGCONT at the start of the next). Anything that measures its speed over
// a window of 50 ms or more sees `share` of the machine's speed, however idle the CPUs are
// (unlike nice, which only matters under contention). Own thread, started on first use.

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace orch::fake_kube {

class CpuThrottle {
 public:
  CpuThrottle() = default;
  ~CpuThrottle();  // stop()
  CpuThrottle(const CpuThrottle&) = delete;
  CpuThrottle& operator=(const CpuThrottle&) = delete;

  // Throttles the process group `pid` leads to `share` (0 < share < 1) until it is gone.
  void add(pid_t pid, double share);
  // Ends the thread and lets every throttled process run (SIGCONT).
  void stop();

 private:
  void loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<pid_t, double> shares_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace orch::fake_kube
