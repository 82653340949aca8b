#pragma once
// The launch contract (issue 14, docs/launch-contract.md): what every task of a job sees,
// whatever the provider. A job asks for `nodes` x `tasks_per_node` tasks; each task learns its
// place in the gang and the rendezvous address from the same variables, under orchestrate's
// names (ORCH_*) and under the names torchrun and PyTorch scripts already read (MASTER_ADDR,
// RANK, ...). Providers fill a TaskPlace (Slurm from srun's per-task variables, local sites
// from the virtual node they start, Kubernetes from the pod's completion index) and the agent
// exports task_env(place) before it runs the command. Pure: no I/O.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scheduler/common/result.h"

namespace orch {

struct TaskPlace {
  int node_rank = 0;  // 0 .. nnodes-1; node 0 hosts the rendezvous
  int nnodes = 1;
  int tasks_per_node = 1;   // 1: one process per node (which may run torchrun itself)
  int local_rank = 0;       // 0 .. tasks_per_node-1, on this node
  std::string master_addr;  // the host of node 0, as the other nodes reach it
  int master_port = 0;      // 1 .. 65535
};

// invalid, naming the field and its range, when the place is not one a gang can have.
Result<void> check_task_place(const TaskPlace& place);

// The task's rank in the whole gang: node_rank * tasks_per_node + local_rank.
int task_rank(const TaskPlace& place);
int task_count(const TaskPlace& place);

// The variables a task gets, in a fixed order: ORCH_NODE_RANK, ORCH_NNODES, ORCH_TASK_RANK,
// ORCH_NTASKS, ORCH_LOCAL_RANK, ORCH_MASTER_ADDR, ORCH_MASTER_PORT, then NODE_RANK, WORLD_SIZE,
// RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT. With tasks_per_node 1 the torch names describe
// nodes, as torchrun expects of the process that starts it (WORLD_SIZE = nnodes).
std::vector<std::pair<std::string, std::string>> task_env(const TaskPlace& place);

// The rendezvous port of an attempt: the same for every task without any of them talking (a
// function of the launch token), in 20000..29999, away from the ephemeral range Linux hands to
// outgoing connections (32768 and up).
int master_port_for(std::string_view token);

// How often each task's agent writes a heartbeat when the site judges silence after timeout_s:
// every 5 s (NVIDIA's resiliency extension checks as often), or a third of a shorter timeout so
// that one late heartbeat is never a loss. 0 (no heartbeat check): every 30 s, for the record.
double heartbeat_interval_s(double timeout_s);

// A task's place from Slurm's per-task variables as srun sets them (SLURM_NODEID,
// SLURM_NNODES, SLURM_LOCALID, SLURM_NTASKS, SLURM_PROCID), with the rendezvous given.
// `lookup` reads one variable (nullopt when unset). invalid names the variable that is missing
// or not a number, or the ones that disagree (SLURM_NTASKS not nnodes x tasks_per_node).
Result<TaskPlace> task_place_from_slurm(
    const std::function<std::optional<std::string>(std::string_view)>& lookup,
    const std::string& master_addr, int master_port);

}  // namespace orch
