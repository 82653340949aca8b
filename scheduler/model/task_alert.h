#pragma once
// An io stall an agent raised (issue 43, agents/README.md "Save watch"): the `io_stall` record,
// repeated as the `"stall"` member of the task's heartbeats while the save lasts, so a site that
// reads only a task's newest record still sees it. The sites put it in RunObservation::alerts;
// the brain records it once per save (scheduler/brain/io_stall.h). Pure.

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string_view>

#include "scheduler/model/site_types.h"

namespace orch {

// The stall a record states: the record itself when its event is "io_stall", else its "stall"
// member. nullopt when there is none or it names no path. kind "io_stall"; node and rank from
// the stall (else the record's "node" and "task_rank"); detail in words.
std::optional<TaskAlert> task_alert_of(const nlohmann::json& record);
// The same from one line of an event file (nullopt when it does not parse).
std::optional<TaskAlert> task_alert_of_line(std::string_view line);

}  // namespace orch
