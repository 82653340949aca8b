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
#include "tests/harness/store_fixture.h"

namespace orch::testing {

class BrainFixture : public StoreFixture {
 protected:
  // May be called again by a test to start over with other clusters or scheduling.
  void start(std::vector<ClusterSpec> clusters, SchedulingSpec scheduling = {}) {
    brain.reset();  // before the store it points into
    open_store();
    brain = std::make_unique<Brain>(*store, clock, std::move(clusters),
                                    PlacementPipeline::standard(), std::move(scheduling));
    ASSERT_TRUE(brain->start().ok());
  }

  JobId submit(const JobSpec& spec) {
    auto r = brain->handle(SubmitJob{spec});
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? r->job_id : 0;
  }

  // Submitted with ?queue_anyway=true: kept even when no configured cluster could hold it.
  JobId submit_anyway(const JobSpec& spec) {
    Submitter who;
    who.queue_anyway = true;
    auto r = brain->handle(SubmitJob{spec, who});
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? r->job_id : 0;
  }

  void handle(const BrainEvent& e) {
    auto r = brain->handle(e);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }

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
    if (instant_data) settle_data();
  }

  // What a copy holds, as the fake storage lists it: one file whose size and hash follow from
  // the copy's base name, so a faithful copy (same base name elsewhere) matches its source.
  static Manifest fake_manifest(const std::string& path) {
    const std::string base = path.substr(path.find_last_of('/') + 1);
    std::string hex;
    for (char c : base) {
      static const char* digits = "0123456789abcdef";
      hex += digits[(static_cast<unsigned char>(c) >> 4) & 0xf];
      hex += digits[static_cast<unsigned char>(c) & 0xf];
    }
    hex.resize(64, '0');
    Manifest m;
    m.files.push_back({"", 1000 + base.size(), hex});
    return m;
  }

  // Plays the sites' storage and the transfer worker, instantly and faithfully: every listing
  // and deletion asked of a healthy site is answered, every transfer completes. Tests about the
  // data plane itself turn instant_data off and answer by hand.
  void settle_data() {
    for (int round = 0; round < 20; ++round) {
      bool any = false;
      for (const auto& c : store->clusters().value()) {
        if (c.health != SiteHealth::healthy) continue;
        for (const auto& a : outbox(c.name)) {
          if (a.kind == ActionKind::manifest) {
            handle(ManifestCompleted{a.id, c.name, a.payload,
                                     fake_manifest(a.payload.value("path", std::string()))});
            any = true;
          } else if (a.kind == ActionKind::remove) {
            handle(RemoveCompleted{a.id, c.name, a.payload, Ok{}});
            any = true;
          }
        }
      }
      for (const auto& t : store->transfers(true, 1000).value()) {
        if (t.state != TransferState::queued && t.state != TransferState::running) continue;
        handle(TransferProgressed{t.id, TransferProgress{}});
        handle(TransferFinished{t.id, TransferOutcome{1000, 1.0, "test", 0}});
        any = true;
      }
      if (!any) return;
    }
  }

  bool instant_data = true;

  // Where the job of attempt `a` saves the checkpoint of step s (train()).
  static std::string ckpt_path(const AttemptRow& a, std::int64_t s) {
    return a.checkpoint_dir + "/step-" + std::to_string(s);
  }

  // Steps first..last, `tokens` each taking `seconds`, with a checkpoint every `every` steps,
  // saved where the job must keep them: <its checkpoint directory>/step-<s>.
  void train(const AttemptRow& a, int first, int last, int every = 10, std::int64_t tokens = 1000,
             double seconds = 0.5) {
    std::vector<ProgressLine> lines;
    for (int s = first; s <= last; ++s) {
      lines.push_back(ProgressReport{s, tokens, seconds, std::nullopt});
      if (every > 0 && s % every == 0) {
        lines.push_back(CheckpointReport{s, ckpt_path(a, s), 0.1});
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

  std::unique_ptr<Brain> brain;
};

}  // namespace orch::testing
