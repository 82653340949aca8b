#pragma once
// A brain on an in-memory store and a fake clock, plus helpers to play a site's part:
// confirm launches, report progress, exits and outages. Tests run the brain event by event
// and read the outbox: no threads, no sleeps.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "scheduler/brain/brain.h"
#include "scheduler/common/clock.h"
#include "scheduler/store/store.h"
#include "tests/harness/builders.h"

namespace orch::testing {

class BrainFixture : public ::testing::Test {
 protected:
  void start(std::vector<ClusterSpec> clusters) {
    auto s = Store::open(":memory:");
    ASSERT_TRUE(s.ok()) << s.error().message;
    store = std::move(*s);
    brain = std::make_unique<Brain>(*store, clock, std::move(clusters));
    ASSERT_TRUE(brain->start().ok());
  }

  JobId submit(const JobSpec& spec) {
    auto r = brain->handle(SubmitJob{spec});
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? r->job_id : 0;
  }

  void handle(const BrainEvent& e) {
    auto r = brain->handle(e);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }

  JobRow job(JobId id) { return store->job(id).value().value(); }
  std::vector<AttemptRow> attempts(JobId id) { return store->attempts_of(id).value(); }
  AttemptRow last_attempt(JobId id) { return attempts(id).back(); }
  std::vector<OutboxRow> outbox(const std::string& cluster) {
    return store->pending_actions(cluster).value();
  }

  // The site confirms every pending launch on `cluster` and reports the attempts running.
  void site_launches_all(const std::string& cluster) {
    for (const auto& a : outbox(cluster)) {
      if (a.kind != ActionKind::launch) continue;
      handle(LaunchCompleted{a.id, a.token, LaunchResult{"site-" + a.token, {cluster + "-n0"}},
                             false});
      handle(AttemptObserved{cluster, a.token, RunPhase::running, std::nullopt, {}, {}, {}});
    }
  }

  void report(const AttemptRow& a, std::vector<ProgressLine> lines) {
    handle(AttemptObserved{
        a.cluster, a.token, RunPhase::running, std::nullopt, {}, std::move(lines), {}});
  }

  // Steps first..last, `tokens` each taking `seconds`, with a checkpoint every `every` steps.
  void train(const AttemptRow& a, int first, int last, int every = 10, std::int64_t tokens = 1000,
             double seconds = 0.5) {
    std::vector<ProgressLine> lines;
    for (int s = first; s <= last; ++s) {
      lines.push_back(ProgressReport{s, tokens, seconds, std::nullopt});
      if (every > 0 && s % every == 0) {
        lines.push_back(CheckpointReport{s, "/ckpt/step-" + std::to_string(s), 0.1});
      }
    }
    report(a, std::move(lines));
  }

  // The site reports the attempt in `phase` (running, queued, ...) with these output lines.
  void observe(const AttemptRow& a, RunPhase phase, std::vector<ProgressLine> lines = {}) {
    handle(AttemptObserved{a.cluster, a.token, phase, std::nullopt, {}, std::move(lines), {}});
  }

  // The site stops answering and stays silent past its grace: its attempts end (site_down).
  void site_goes_dark(const std::string& cluster) {
    handle(SiteUnreachable{cluster, "connection timed out"});
    const ClusterSpec* spec = brain->cluster_spec(cluster);
    ASSERT_NE(spec, nullptr);
    clock.advance_ms(static_cast<Millis>(spec->unreachable_grace_s * 1000.0));
    handle(Tick{});
  }

  // Attempts that carry the job: live and not asked to stop. Never more than one.
  std::vector<AttemptRow> carrying(JobId id) {
    std::vector<AttemptRow> out;
    for (const auto& a : attempts(id)) {
      if (a.state != AttemptState::exited && !a.cancel_requested) out.push_back(a);
    }
    return out;
  }

  std::vector<EventRow> events_of_kind(JobId id, const std::string& kind) {
    std::vector<EventRow> out;
    for (const auto& e : store->events_of(id).value()) {
      if (e.kind == kind) out.push_back(e);
    }
    return out;
  }

  void exits(const AttemptRow& a, std::optional<int> code,
             std::optional<int> signal = std::nullopt) {
    ExitStatus st;
    st.exit_code = code;
    st.signal = signal;
    handle(AttemptObserved{a.cluster, a.token, RunPhase::exited, st, {}, {}, {}});
  }

  std::vector<std::string> event_kinds(JobId id) {
    std::vector<std::string> kinds;
    for (const auto& e : store->events_of(id).value()) kinds.push_back(e.kind);
    return kinds;
  }

  FakeClock clock;
  std::unique_ptr<Store> store;
  std::unique_ptr<Brain> brain;
};

}  // namespace orch::testing
