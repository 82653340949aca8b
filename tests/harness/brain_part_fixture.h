#pragma once
// One part of the brain on its own: an in-memory store, a fake clock and the core the parts
// share. Tests write the rows a part starts from directly (no other part runs), call the part
// inside one transaction as Brain::handle does, and read the store and the outbox.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "scheduler/brain/brain_core.h"
#include "scheduler/common/clock.h"
#include "scheduler/lifecycle/hang_policy.h"
#include "scheduler/store/store.h"
#include "tests/harness/builders.h"
#include "tests/harness/store_fixture.h"

namespace orch::testing {

class BrainPartFixture : public StoreFixture {
 protected:
  // The clusters, configured and active, each with `nodes` nodes named <cluster>-n0, -n1, ...
  void start(std::vector<ClusterSpec> clusters) {
    open_store();
    core = std::make_unique<BrainCore>(*store, clock, clusters);
    for (const auto& c : clusters) {
      ASSERT_TRUE(store->ensure_cluster(c.name, Admission::active, clock.now_ms()).ok());
      for (int i = 0; i < c.nodes; ++i) {
        NodeRow n;
        n.cluster = c.name;
        n.name = c.name + "-n" + std::to_string(i);
        n.gpus = c.gpus_per_node;
        n.healthy = true;
        n.seen_ms = clock.now_ms();
        ASSERT_TRUE(store->upsert_node(n).ok());
      }
    }
  }

  // Runs body in one transaction (as Brain::handle does) and expects it to succeed.
  template <typename Body>
  void in_transaction(Body body) {
    auto r = store->transaction([&]() -> Result<void> {
      auto out = body();
      if (!out) return out.error();
      return Ok{};
    });
    ASSERT_TRUE(r.ok()) << r.error().message;
  }

  // Runs body in one transaction and returns the value it gives (expecting success).
  template <typename Body>
  auto transaction_value(Body body) {
    std::decay_t<decltype(*body())> out{};
    in_transaction([&]() -> Result<void> {
      auto r = body();
      if (!r) return r.error();
      out = std::move(*r);
      return Ok{};
    });
    return out;
  }

  // A stored job in `state`.
  JobRow add_job(const JobSpec& spec, JobState state = JobState::pending) {
    JobRow j;
    j.name = spec.name;
    j.spec = spec;
    j.created_ms = j.updated_ms = clock.now_ms();
    j.id = store->insert_job(j).value();
    // Through the states a job passes to get there (the store refuses other transitions).
    std::vector<JobState> path;
    if (state == JobState::running || state == JobState::resuming) {
      path = {JobState::placed, JobState::running};
    }
    if (state != JobState::pending && (path.empty() || path.back() != state)) path.push_back(state);
    for (JobState to : path) EXPECT_TRUE(store->set_job_state(j, to, clock.now_ms()).ok());
    return j;
  }

  // A stored attempt of the job on `cluster`, launched and running on `nodes`.
  AttemptRow add_attempt(const JobRow& job, const std::string& cluster, int no,
                         std::vector<std::string> nodes = {}) {
    AttemptRow a;
    a.job_id = job.id;
    a.no = no;
    a.cluster = cluster;
    a.token = "orch-" + std::to_string(job.id) + "-" + std::to_string(no) + "-t";
    a.gpus = job.spec.nodes * job.spec.gpus_per_node;
    a.nodes = std::move(nodes);
    a.started_ms = clock.now_ms();
    const HangLimits hang = hang_limits_for(job.spec.health);
    a.hang_after_ms = hang.hang_after_ms;
    a.startup_timeout_ms = hang.startup_timeout_ms;
    a.hang_watch = hang.watch;
    a.launch_done = true;
    a.id = store->insert_attempt(a).value();
    EXPECT_TRUE(store->set_attempt_state(a, AttemptState::running, clock.now_ms()).ok());
    return a;
  }

  AttemptRow attempt(const AttemptRow& a) {
    return store->attempt_by_token(a.token).value().value();
  }
  std::vector<OutboxRow> outbox(const std::string& cluster, ActionKind kind) {
    std::vector<OutboxRow> out;
    for (const auto& row : store->pending_actions(cluster).value()) {
      if (row.kind == kind) out.push_back(row);
    }
    return out;
  }
  std::unique_ptr<BrainCore> core;
};

}  // namespace orch::testing
