#pragma once
// How a node stands against its cluster's quarantine rule, read from the store one way for the
// brain (which acts on it) and for `node list` (which shows it): the incidents counted in the
// window since the node last came back, and the incident a new ledger entry belongs to
// (scheduler/health/incidents.h).

#include <map>
#include <string>
#include <vector>

#include "scheduler/health/node_rate.h"
#include "scheduler/health/quarantine.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/store/store_reader.h"

namespace orch {

// The cluster's quarantine settings as the rules take them (the defaults without a spec).
QuarantinePolicy quarantine_policy(const ClusterSpec* spec);

// The times of the node's incidents that count now: failures within the window, after its last
// release (a release starts a clean slate), one per incident.
Result<std::vector<Millis>> counted_failures(StoreReader& store, const std::string& cluster,
                                             const std::string& node,
                                             const QuarantinePolicy& policy, Millis now);

// The incident of `row` (a ledger entry about to be written), from the node's row and its
// newest entries. Entries of other kinds than failures get none.
Result<std::string> incident_of(StoreReader& store, const NodeEventRow& row);

// Whether `row` (a ledger entry about to be written, its incident set) is the first failure under
// work of its incident on that node: the one that counts in NodeRow::work_failures.
Result<bool> first_work_failure(StoreReader& store, const NodeEventRow& row);

// The node's rate verdict now (node_rate.h): its failures under work and GPU-hours, a running
// attempt's time so far included, against the rest of its cluster's. Reads the cluster's node
// rows and its live attempts: the cost grows with the fleet, never with history.
// Every node of the cluster's verdict at once (what `node list` shows), in one pass.
Result<std::map<std::string, RateVerdict>> cluster_rate_verdicts(StoreReader& store,
                                                                 const std::string& cluster,
                                                                 Millis now,
                                                                 const RatePolicy& policy = {});
Result<RateVerdict> node_rate_verdict(StoreReader& store, const std::string& cluster,
                                      const std::string& node, Millis now,
                                      const RatePolicy& policy = {});

}  // namespace orch
