#pragma once
// A local site on a real GPU box (issue 42): every virtual node is this machine, so virtual node
// i's GPU slot j is the machine's device i x gpus_per_node + j (its own, preferred; any free
// device of the machine serves). An attempt is given device indexes no other live run of the
// site holds (recorded in its request.json, so a restarted
// server sees them), and each task gets them as CUDA_VISIBLE_DEVICES. `nvidia-smi` says how many
// devices the machine has, for the site's preflight and the server's warning.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/model/preflight.h"

namespace orch::local {

// The accelerator that stands for CPU slots: a site with it assigns no devices.
inline constexpr const char* kCpuSlot = "cpu-slot";
inline constexpr const char* kCudaVisibleDevices = "CUDA_VISIBLE_DEVICES";

// node name -> the machine's device indexes the attempt holds there.
using GpuAssignment = std::map<std::string, std::vector<int>>;
// device index -> the token of the live run that holds it.
using HeldGpus = std::map<int, std::string>;

// The devices one node of an attempt gets: `want` of the machine's `total` devices that nobody
// holds, the node's own slots (node_index x gpus_per_node, ...) first, then the lowest others:
// every virtual node is this machine, so any free device serves (and placement counts free GPUs
// over the whole site, not per node). They are marked held by `token`, sorted. nullopt, with
// nothing marked, when fewer are free.
std::optional<std::vector<int>> take_devices(int node_index, int gpus_per_node, int total, int want,
                                             const std::string& token, HeldGpus& held);

// "0,1,2" (empty: no device).
std::string device_list(const std::vector<int>& indexes);

// What nvidia-smi says of this machine: the number of GPUs it lists, or why it could not say.
struct MachineGpus {
  std::optional<int> count;
  std::string problem;  // set when count is not
};
// Runs `<program> --query-gpu=index --format=csv,noheader` (program without a '/' is looked up
// in PATH) and counts the lines that are a device index. Never fails: a missing program, a
// failing or silent one is the problem.
MachineGpus count_machine_gpus(const std::string& program, std::chrono::milliseconds timeout);

// The preflight's "gpus" line for a site of nodes x gpus_per_node devices: it passes (a
// mismatch is a warning, not a fault: the site still runs what it can) and its text starts with
// "warning: " when nvidia-smi lists another count or cannot be asked.
PreflightCheck gpu_count_check(int nodes, int gpus_per_node, const std::string& accelerator,
                               const MachineGpus& machine);
// Whether a "gpus" check is a warning (its text says so).
bool is_warning(const PreflightCheck& check);

}  // namespace orch::local
