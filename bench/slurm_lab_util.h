#pragma once
// bench_slurm's dealings with the Slurm lab (tests/lab/slurm) and the processes it runs: a lab
// that is always torn down, the job processes of a node, slurmctld's own settings and log, and
// the stop flag that SIGINT/SIGTERM raise so that every loop ends at its next check.

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "testkit/slurm_lab.h"

namespace orch::bench {

// The SIGINT/SIGTERM handler: raises the stop flag.
void on_signal(int sig);
// Whether the bench was asked to stop.
bool stopping();

// Polls `done` every `every` until it is true, the deadline passes or the bench is stopped.
template <typename Done>
bool wait_for(Done done, std::chrono::milliseconds timeout,
              std::chrono::milliseconds every = std::chrono::milliseconds(100)) {
  const auto deadline = SteadyClock::now() + timeout;
  while (!stopping() && SteadyClock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(every);
  }
  return false;
}

// Job processes of one node of one cluster: what a crashed machine takes with it.
std::vector<pid_t> job_processes_on(const std::string& slurm_conf, const std::string& node);

// SIGKILLs each of pids; how many there were.
std::size_t kill_all(const std::vector<pid_t>& pids);

// A lab that is always torn down: down.sh --purge by the SlurmLab destructor, then whatever
// still carries the lab's marker in its environment is SIGKILLed (there should be nothing).
class LabGuard {
 public:
  explicit LabGuard(std::unique_ptr<test::SlurmLab> lab) : lab_(std::move(lab)) {}
  ~LabGuard();
  LabGuard(const LabGuard&) = delete;
  LabGuard& operator=(const LabGuard&) = delete;
  test::SlurmLab& operator*() const { return *lab_; }
  test::SlurmLab* operator->() const { return lab_.get(); }

 private:
  std::unique_ptr<test::SlurmLab> lab_;
};

// A lab of these clusters, up; throws when it does not come up. The labs' SlurmdTimeout comes
// from LAB_SLURMD_TIMEOUT in this process's environment (bench_slurm --slurmd-timeout).
std::unique_ptr<LabGuard> start_lab(const std::vector<std::string>& names,
                                    int nodes_per_cluster = 1);

// The value of KEY in `scontrol show config` ("KEY = value"), or "?".
std::string slurm_config(const test::SlurmLab& lab, const std::string& cluster,
                         const std::string& key);

// When slurmctld first logged a line containing `what` about `node` at or after `since`, in
// seconds after `since`: its log has millisecond timestamps ("[2026-11-30T09:33:54.442] ...",
// local time), finer than any poll of scontrol.
std::optional<double> logged_after(const std::string& log, const std::string& node,
                                   const std::string& what,
                                   std::chrono::system_clock::time_point since);

}  // namespace orch::bench
