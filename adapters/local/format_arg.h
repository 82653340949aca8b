#pragma once
// A number as a command-line argument of the agent, in the shortest form that reads back the
// same: 600 -> "600", 0.2 -> "0.2".

#include <string>

namespace orch::local {

std::string format_arg(double value);

}  // namespace orch::local
