#pragma once
// Tables of the checkpoint and data routes' JSON (shapes in docs/rest-api.md) and their small
// formatters. Like job_render.h, each one tolerates missing or null fields.

#include <cstdint>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace orch {

// {"job", "checkpoints":[..]}; AGE is counted from now_ms.
void render_checkpoints(const nlohmann::json& body, std::int64_t now_ms, std::ostream& out);
void render_datasets(const nlohmann::json& body, std::ostream& out);  // {"datasets":[..]}
// {"groups":[..], "transfers":[..]}: a heading and a table per group (its label, how many in each
// state, bytes, the rate of those running), then the last error of each one not done; a running
// transfer's rate is the rate now, a copied one's its average ("avg"). all: the list was not
// only the active and failed ones (for its message when empty).
void render_transfers(const nlohmann::json& body, bool all, std::ostream& out);

// Whether any transfer in {"transfers":[..]} is queued, running or verifying.
bool any_transfer_active(const nlohmann::json& body);

// A byte count for people: "512 B", "1.5 GB", "120 GB", "1.2 TB" (powers of 1000, like MB/s);
// "-" for null or non-numbers.
std::string human_bytes(const nlohmann::json& bytes);
// Seconds as "45s", "12m05s", "3h20m", "4d06h"; "-" when negative.
std::string human_duration(double seconds);
// A 0..100 percent as "[#########...........]  45%" (width cells between the brackets);
// "-" for null.
std::string progress_bar(const nlohmann::json& percent, int width = 20);

}  // namespace orch
