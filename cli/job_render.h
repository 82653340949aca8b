#pragma once
// Human-readable renderings of the REST API's JSON (shapes in docs/rest-api.md). Each one
// tolerates missing or null fields: an older or newer server must never crash the CLI.

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace orch {

void render_clusters(const nlohmann::json& body, std::ostream& out);  // {"clusters":[..]} or [..]
// {"jobs":[..]}; wide (`job list -o wide`): also each job's priority, team, group and owner.
void render_jobs(const nlohmann::json& body, std::ostream& out, bool wide = false);
// A job's name, and the values of its sweep point when it is one: "lr-sweep-1 · LR=1e-4 --seed 1".
std::string job_title(const nlohmann::json& job);
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
