// The writes every part of the brain makes.
#include "scheduler/brain/brain_core.h"

namespace orch {

const ClusterSpec* BrainCore::cluster_spec(const std::string& name) const {
  return find_cluster(clusters, name);
}

Result<void> BrainCore::event(JobId job, std::optional<int> attempt_no, const std::string& kind,
                              const std::string& message) const {
  return store.add_event(job, attempt_no, clock.now_ms(), kind, message);
}

namespace {

// An action on one attempt for its site's outbox, at the clock's time.
Result<void> enqueue_for(Store& store, const Clock& clock, const AttemptRow& attempt,
                         ActionKind kind, nlohmann::json payload) {
  OutboxRow row;
  row.cluster = attempt.cluster;
  row.kind = kind;
  row.token = attempt.token;
  row.payload = std::move(payload);
  row.created_ms = clock.now_ms();
  if (auto r = store.enqueue(row); !r) return r.error();
  return Ok{};
}

}  // namespace

Result<void> BrainCore::request_cancel(AttemptRow& attempt, const std::string& why) const {
  attempt.cancel_requested = true;
  if (auto r = store.update_attempt(attempt); !r) return r;
  if (auto r = enqueue_for(store, clock, attempt, ActionKind::cancel, {{"reason", why}}); !r) {
    return r;
  }
  return event(
      attempt.job_id, attempt.no, "cancel-requested",
      "asked " + attempt.cluster + " to stop attempt " + std::to_string(attempt.no) + ": " + why);
}

Result<void> BrainCore::request_signal(const AttemptRow& attempt, const std::string& signal) const {
  return enqueue_for(store, clock, attempt, ActionKind::signal, {{"signal", signal}});
}

}  // namespace orch
