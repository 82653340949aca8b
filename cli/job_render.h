#pragma once
// Human-readable renderings of the REST API's JSON (shapes in docs/rest-api.md). Each one
// tolerates missing or null fields: an older or newer server must never crash the CLI.

#include <ostream>

#include <nlohmann/json.hpp>

namespace orch {

void render_clusters(const nlohmann::json& body, std::ostream& out);  // {"clusters":[..]} or [..]
void render_jobs(const nlohmann::json& body, std::ostream& out);      // {"jobs":[..]}
// A cluster's nodes, then its recent node events ({"cluster", "nodes":[..], "events":[..]}).
void render_cluster_nodes(const nlohmann::json& body, std::ostream& out);
// The job's fields, then its attempts table, then its last 10 events.
void render_job(const nlohmann::json& job, const nlohmann::json& attempts,
                const nlohmann::json& events, std::ostream& out);
void render_attempts(const nlohmann::json& attempts, std::ostream& out);  // {"attempts":[..]}
void render_events(const nlohmann::json& events, std::size_t last_n, std::ostream& out);
void render_explain(const nlohmann::json& explain, std::ostream& out);
// `orchestrate plan`: the job's checkpoint advice and the ETTR expected at intervals around it.
void render_plan(const nlohmann::json& job, std::ostream& out);

}  // namespace orch
