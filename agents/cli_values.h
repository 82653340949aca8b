#pragma once
// Flag values for the agent's subcommands: integers and seconds, checked strictly (the whole
// word must be a number in range), so a typo is a usage error and not a silent zero.

#include <cstdint>
#include <string>

namespace orch::agent {

// An integer in [min, max]; false when s is not one.
bool parse_int64(const std::string& s, std::int64_t min, std::int64_t max, std::int64_t* out);

// A finite number of seconds in [0, max]; false when s is not one.
bool parse_seconds(const std::string& s, double max, double* out);

}  // namespace orch::agent
