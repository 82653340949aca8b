#pragma once
// A scripted MetricsApi: one job, one cluster, a few figures, or the shared forced failure.

#include "tests/unit/web/fake_api_shared.h"
#include "web/metrics_api.h"

namespace orch::testing {

class FakeMetricsApi : public virtual MetricsApi, public virtual FakeApiShared {
 public:
  Result<MetricsSnapshot> metrics() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto e = failure()) return *e;
    MetricsSnapshot s;
    s.jobs_by_state = {{"running", 1}, {"succeeded", 3}};
    s.attempts_by_cause = {{"node_lost", 2}};
    s.live_jobs = {{1, "llama \"8b\"", "running", "alpha", 120, 0.9, 0.41}};
    s.clusters = {{"alpha", "healthy", "active", 16, 8, 0, 0, 1.5}};
    s.brain_queue = 2;
    return s;
  }
};

}  // namespace orch::testing
