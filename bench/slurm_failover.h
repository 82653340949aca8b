#pragma once
// bench_slurm's measurement 1: a node of alpha crashes under a running toy trainer (slurmd, its
// stepd's and the job's processes SIGKILLed). From the kill: when Slurm marks the node DOWN (its
// own detection, the baseline), when orchestrate ends the attempt (REST says exited), when the
// replacement runs on beta. A fresh two-cluster lab and `orchestrate serve` per run.

namespace orch::bench {

struct FailoverOptions {
  int runs = 5;
  int poll_ms = 200;       // the site worker's poll_interval_ms
  double backoff_s = 0.1;  // the job's restart.backoff.initial_s
  int slurmd_timeout = 0;  // LAB_SLURMD_TIMEOUT for the labs; 0: the lab's default
};

// Runs o.runs crashes and prints each run and a table of medians and maxima (stdout).
void bench_failover(const FailoverOptions& o);

}  // namespace orch::bench
