#pragma once
// A GPU fault the agent's live watch recorded on a task's node (issue 43, agents/README.md "Live
// watch"): the `fault` record, repeated as the `"fault"` member of every later record of the
// task's event file (heartbeats, progress, the exit), so a site that reads only a task's newest
// record still sees it. The sites (Slurm, local) end the attempt with the fault's cause, node
// and detail. Pure.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "scheduler/model/site_types.h"

namespace orch {

struct TaskFault {
  ExitCause cause = ExitCause::gpu_xid;  // gpu_xid or gpu_ecc
  std::string node;                      // "" when the record does not say
  std::optional<int> task_rank;
  std::optional<int> gpu;
  std::string pci;  // "0000:3b:00"
  std::optional<int> xid;
  std::optional<std::int64_t> ecc_uncorrected;
  std::string detail;  // "Xid 79 on GPU 3 (PCI 0000:3b:00): GPU has fallen off the bus"
  std::int64_t at_ms = 0;
};

// The fault a record states: the record itself when its event is "fault" (or it is a fault as
// task_fault_json writes it: "cause" and no "event"), else its "fault" member. nullopt when there is none, or its cause is not gpu_xid/gpu_ecc.
std::optional<TaskFault> task_fault_of(const nlohmann::json& record);
// The same from one line of an event file (nullopt when it does not parse).
std::optional<TaskFault> task_fault_of_line(std::string_view line);

// How the attempt ended: cause, failed_node (the fault's node, else `node`), failed_rank
// (the fault's, else `rank` when >= 0), detail "<node>: <fault detail>", last_heard_ms the
// fault's time.
ExitStatus fault_exit_status(const TaskFault& fault, const std::string& node, int rank);

// The fault as one JSON object (the keys of the agent's record, without "event"), for markers.
std::string task_fault_json(const TaskFault& fault);

}  // namespace orch
