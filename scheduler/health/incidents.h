#pragma once
// Which entries of a node's ledger are one incident (issue 15), pure. Failures count by cause,
// not by clock: the site marking a node down and the job on it ending with NODE_FAIL are one
// incident; a node that kills five jobs has failed five times, however fast.
//
// Each entry gets its incident key when it is written, from what it names and the node's state:
//   1. an entry while the node is down (the site lists it unhealthy) joins that down episode;
//   2. the entry that opens a down episode (node-unhealthy) joins the node's newest failure when
//      the site has not listed the node healthy since (the job saw NODE_FAIL first);
//   3. an entry under an attempt is that attempt's (a GPU error and then a NODE_FAIL of one
//      attempt are one failure; a second job killed is a second failure);
//   4. anything else is an incident of its own (a failed probe, a node first listed down).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/common/clock.h"

namespace orch {

struct IncidentContext {
  std::string kind;  // the new entry's
  Millis at_ms = 0;
  std::optional<std::int64_t> job_id;  // the attempt it is under, if any
  std::optional<int> attempt_no;
  // The node's down episode in progress: the incident of the entry that opened it (empty: the
  // node is up, or down without a recorded episode).
  std::string open_episode;
  // For node-unhealthy: the incident of the node's newest failure entry when the site has not
  // listed the node healthy since that entry was written (empty otherwise).
  std::string unlisted_failure;
};

// The incident key of a new entry ("job 7 attempt 2", "down 1733011200000", "probe-failed
// 1733011200000").
std::string incident_key(const IncidentContext& c);

struct LedgerIncident {
  Millis at_ms = 0;
  std::string incident;  // empty: an incident of its own
};

// The incidents among `entries` (failure entries, oldest first) at or after from_ms, each at the
// time of its first entry, oldest first.
std::vector<Millis> incident_times(const std::vector<LedgerIncident>& entries, Millis from_ms);

}  // namespace orch
