#pragma once
// The prefix of a progress protocol line (progress_line.h, docs/progress-protocol.md): a job's
// output line that starts with it carries one JSON object. Shared by the agent's scanner
// (agents/protocol_scan.h), the scheduler's parser and the output tail that leaves such lines
// out. Header-only and free of libraries: the agent is built apart from the scheduler.

#include <string_view>

namespace orch {

inline constexpr std::string_view kProgressPrefix = "@orchestrate ";

}  // namespace orch
