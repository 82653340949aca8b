#pragma once
// Tables of the health routes' JSON (shapes in docs/rest-api.md). Like job_render.h, each one
// tolerates missing or null fields.

#include <ostream>

#include <nlohmann/json.hpp>

namespace orch {

void render_nodes(const nlohmann::json& body, std::ostream& out);  // {"nodes":[..]}
void render_node(const nlohmann::json& node, std::ostream& out);   // one of them, in full
// One round of probes (already picked out), with a heading naming it and how many passed.
void render_probe_round(const nlohmann::json& probes, std::ostream& out);
// One node's probes, newest first, with their time and round.
void render_node_probes(const nlohmann::json& probes, std::ostream& out);
void render_scorecards(const nlohmann::json& report, std::ostream& out);  // {"cards":[..]}
// GET /reports/cost (issue 45): a row per job, team, cluster or vendor, money to the cent.
void render_cost_report(const nlohmann::json& report, std::ostream& out);

// The probes of the newest round in {"probes":[..]} (newest first), as an array.
nlohmann::json latest_round(const nlohmann::json& body);

}  // namespace orch
