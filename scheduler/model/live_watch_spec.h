#pragma once
// A cluster's `live_watch:` (issue 43, docs/health.md "Live watch"): how each task's agent
// watches its node's GPUs while the job runs, and the `orchestrate-agent run` flags that say
// so, which the Slurm and local sites put on every task's command line. Pure.

#include <string>
#include <vector>

namespace orch {

struct LiveWatchSpec {
  double watch_s = 2;  // the kernel log is read this often; 0: no live watch at all
  // The kernel log: "" is /dev/kmsg (read from its end at start); a file is followed as tail -f
  // does. "{node}" in it stands for the node's name (the agent fills it in), so a lab or a
  // cluster whose nodes log to a shared filesystem can point each node at its own file.
  std::string kernel_log;
  std::string nvidia_smi;  // "": nvidia-smi in PATH on the node; "none": no GPU samples
  double gpu_sample_s = 30;       // nvidia-smi's fields this often; 0: none
  bool stop_on_fault = false;     // fault_action stop: the agent SIGTERMs the job at once
};

// --watch-s S --gpu-sample-s S --fault-action record|stop [--kernel-log P] [--nvidia-smi P].
std::vector<std::string> live_watch_flags(const LiveWatchSpec& spec);

}  // namespace orch
