#pragma once
// `orchestrate job show ID --series` (issue 41): the run as a series, GET
// /api/v1/jobs/{id}/series, as one block per attempt with unicode sparklines of loss, tokens/s
// and MFU (one scale per figure across attempts, so the curve continues from one to the next),
// each with its lowest and last value; `-o json` (or --json) prints the endpoint's JSON as is.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/client_commands.h"

namespace orch {

int run_job_series(const ClientOptions& o, std::int64_t id, std::ostream& out, std::ostream& err);

// The series view of an answer of GET /api/v1/jobs/{id}/series, sparklines at most `width`
// columns wide.
void render_series(const nlohmann::json& series, std::ostream& out, int width = 60);

// One character of ▁▂▃▄▅▆▇█ per value, scaled from lo (▁) to hi (█); a space for a missing
// value (nullopt); ▄ for every value when lo == hi.
std::string sparkline(const std::vector<std::optional<double>>& values, double lo, double hi);

}  // namespace orch
