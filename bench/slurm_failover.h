#pragma once
// bench_slurm's measurement 1: a node of alpha crashes under a running toy trainer (slurmd, its
// stepd's and the job's processes SIGKILLed). From the kill: when Slurm marks the node DOWN (its
// own detection, the baseline), when orchestrate ends the attempt (REST says exited), when the
// replacement runs. A fresh lab and `orchestrate serve` per run.
//
// Two shapes: a one-node job on a two-cluster lab of one node each, whose replacement runs on
// beta (issue 3); or, with gang_nodes >= 2 (issue 14), a gang of that many nodes on alpha alone
// with one node to spare, one of whose nodes crashes: the attempt ends from the tasks'
// heartbeats (heartbeat_timeout_s) and the replacement runs on alpha without that node.

namespace orch::bench {

struct FailoverOptions {
  int runs = 5;
  int poll_ms = 200;                // the site worker's poll_interval_ms
  double backoff_s = 0.1;           // the job's restart.backoff.initial_s
  int slurmd_timeout = 0;           // LAB_SLURMD_TIMEOUT for the labs; 0: the lab's default
  int gang_nodes = 1;               // >= 2: a gang of this many nodes on alpha (see above)
  double heartbeat_timeout_s = 10;  // the gang's health.heartbeat_timeout_s
  // Out of the box (issue 38): the job says nothing of health or restarts and the clusters
  // nothing of polling, so poll_ms, backoff_s and heartbeat_timeout_s are the product's
  // defaults, not the options above.
  bool defaults = false;
  // Wait for Slurm's own DOWN (SlurmdTimeout and a ping round) before the next run. false: stop
  // watching Slurm once orchestrate's replacement runs, so that runs at SlurmdTimeout 300 take
  // seconds rather than minutes (Slurm's "not responding" is still seen; its DOWN is not).
  bool wait_for_slurm_down = true;
  // Hot spares alpha holds (issue 38; gangs only): the lab's node beyond the gang is held as a
  // spare, so the replacement runs on the survivors and a spare. Each run waits for the spares
  // to be ready before submitting, and times the replacement's first step too.
  int spares = 0;
};

// Runs o.runs crashes and prints each run and a table of medians and maxima (stdout).
void bench_failover(const FailoverOptions& o);

}  // namespace orch::bench
