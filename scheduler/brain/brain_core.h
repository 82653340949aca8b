#pragma once
// What every part of the brain shares: the store (whose one transaction Brain::handle opens
// around each event, so every part's writes for an event commit or roll back together), the
// clock, the configured clusters, and the writes every part makes (a job's event, asking a site
// to stop an attempt). BrainPart gives a part these under the names the parts' code uses.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/store/store.h"

namespace orch {

class BrainCore {
 public:
  BrainCore(Store& the_store, const Clock& the_clock, std::vector<ClusterSpec> configured,
            SchedulingSpec the_scheduling = {})
      : store(the_store),
        clock(the_clock),
        clusters(std::move(configured)),
        scheduling(std::move(the_scheduling)) {}

  Store& store;
  const Clock& clock;
  // The configured clusters; only AddClusters appends (on the brain's thread, between reads),
  // and a rolled-back event's additions are taken out again (Brain::handle).
  std::vector<ClusterSpec> clusters;
  // Priority classes (the clusters file's priority_classes), read at start.
  SchedulingSpec scheduling;
  // Clusters configured wrong: name -> "cluster X misconfigured: ..." (its last preflight failed,
  // or a launch there failed on the server's own configuration since; site_preflight.cpp).
  // Placement passes them by until a preflight passes. Kept here, not in the store: every start
  // runs the preflight again. A rolled-back event's changes are taken back (Brain::handle).
  std::map<std::string, std::string> misconfigured;

  // The configured cluster of that name; nullptr when it is not (or no longer) configured.
  const ClusterSpec* cluster_spec(const std::string& name) const;
  // Records an event in the job's history at the clock's time.
  Result<void> event(JobId job, std::optional<int> attempt_no, const std::string& kind,
                     const std::string& message) const;
  // Marks the attempt as asked to stop and puts a cancel action for its site in the outbox.
  Result<void> request_cancel(AttemptRow& attempt, const std::string& why) const;
  // Puts a signal action for the attempt's site in the outbox (a save request, which stops
  // nothing).
  Result<void> request_signal(const AttemptRow& attempt, const std::string& signal) const;
};

// The base of each part: the shared core under short names.
class BrainPart {
 protected:
  explicit BrainPart(BrainCore& core)
      : core_(core), store_(core.store), clock_(core.clock), clusters_(core.clusters) {}

  const ClusterSpec* cluster_spec(const std::string& name) const {
    return core_.cluster_spec(name);
  }
  Result<void> event(JobId job, std::optional<int> attempt_no, const std::string& kind,
                     const std::string& message) const {
    return core_.event(job, attempt_no, kind, message);
  }
  Result<void> request_cancel(AttemptRow& attempt, const std::string& why) const {
    return core_.request_cancel(attempt, why);
  }

  BrainCore& core_;
  Store& store_;
  const Clock& clock_;
  const std::vector<ClusterSpec>& clusters_;
};

}  // namespace orch
