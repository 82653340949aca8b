#pragma once
// The client commands of node health and provider reports (issue 4): `node list|quarantine|
// release`, `cluster burn-in|probes` and `report providers`. Like client_commands.h, each is a
// run_* function that writes to the given streams and returns the exit code.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "cli/client_commands.h"

namespace orch {

// Every node with its standing; cluster and state (active|quarantined|retired) filter when not
// empty.
int run_node_list(const ClientOptions& o, const std::string& cluster, const std::string& state,
                  std::ostream& out, std::ostream& err);
// One node's standing and the evidence of its rate (issue 43): failures under work, GPU-hours,
// its rate and its cluster's, the ratio and what they decide. Exit 1 when the cluster has no such
// node.
int run_node_show(const ClientOptions& o, const std::string& cluster, const std::string& node,
                  std::ostream& out, std::ostream& err);
// Quarantines (quarantine true) or releases a node by hand, with an optional reason.
int run_node_set_state(const ClientOptions& o, const std::string& cluster, const std::string& node,
                       bool quarantine, const std::string& reason, std::ostream& out,
                       std::ostream& err);

// Starts a burn-in round. With wait, polls the cluster list every poll_ms until the cluster's
// admission is active (exit 1 after timeout_s), then prints the latest round's probes.
int run_cluster_burn_in(const ClientOptions& o, const std::string& name, bool wait, int timeout_s,
                        std::ostream& out, std::ostream& err);
// Drains, activates or retires a cluster (verb: drain, activate, retire), with an optional reason.
int run_cluster_set_admission(const ClientOptions& o, const std::string& name,
                              const std::string& verb, const std::string& reason, std::ostream& out,
                              std::ostream& err);
// Asks the server to read its clusters file again; prints what changed.
int run_cluster_reload(const ClientOptions& o, std::ostream& out, std::ostream& err);
// POST /api/v1/clusters with the clusters document in file: they join the running server.
int run_cluster_add(const ClientOptions& o, const std::string& file, std::ostream& out,
                    std::ostream& err);
// The cluster's preflight, run by the server now: one line per check (name, ok|FAILED|skipped,
// why and what to do). Exit 1 when a check failed (the cluster takes no jobs until it passes).
int run_cluster_check(const ClientOptions& o, const std::string& name, std::ostream& out,
                      std::ostream& err);
// The latest probe round of the cluster; with node, that node's probes newest first.
int run_cluster_probes(const ClientOptions& o, const std::string& name, const std::string& node,
                       std::ostream& out, std::ostream& err);

// Support tickets (ticket_commands.cpp): open one with a cluster's provider, add an update (the
// provider's answer when from_provider), close it, list them (cluster and state "open"/"closed"
// filter when not empty) and show one with its history.
int run_ticket_open(const ClientOptions& o, const std::string& cluster, const std::string& summary,
                    const std::vector<std::string>& nodes, const std::string& incident,
                    std::ostream& out, std::ostream& err);
int run_ticket_update(const ClientOptions& o, std::int64_t id, const std::string& text,
                      bool from_provider, std::ostream& out, std::ostream& err);
int run_ticket_close(const ClientOptions& o, std::int64_t id, const std::string& resolution,
                     std::ostream& out, std::ostream& err);
int run_ticket_list(const ClientOptions& o, const std::string& cluster, const std::string& state,
                    std::ostream& out, std::ostream& err);
int run_ticket_show(const ClientOptions& o, std::int64_t id, std::ostream& out, std::ostream& err);

// The provider scorecards; window_days 0 leaves the server's default (30).
int run_report_providers(const ClientOptions& o, int window_days, std::ostream& out,
                         std::ostream& err);
// What GPU-hours cost (issue 45), by job, team, cluster or vendor, since a UTC date or month
// ("" leaves the server's default: this month).
int run_report_cost(const ClientOptions& o, const std::string& by, const std::string& since,
                    std::ostream& out, std::ostream& err);

}  // namespace orch
