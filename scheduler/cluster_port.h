#pragma once
// The one interface every provider implements (local processes, Slurm over SSH, Kubernetes).
// The brain never calls it: site workers (scheduler/runtime) do, on their own thread, and turn
// what they see into events for the brain. Every call may block (SSH, HTTP) and may fail with
// ErrorKind::unreachable when the site does not answer, which is different from a failed job.
//
// What an implementation must guarantee:
// - Thread safety. The site worker calls it from its thread, the storage worker from another,
//   and REST handlers (read_output, set_outage) from theirs, all at once: every method may run
//   concurrently with any other, and an implementation guards its own state.
// - Launch is idempotent per token. Every launch carries a token unique per attempt; launching a
//   token the site already has returns that launch with LaunchResult::adopted set, and starts
//   nothing (never a second job). The provider makes the token findable (run directory name,
//   Slurm job name/comment, Kubernetes label) and looks it up inside launch() itself, so that
//   a restarted server simply launches again: the site worker asks launch() once per launch and
//   never find() before it (one round trip to the site, not two).
// - Bounded calls. Every call returns in bounded time; a site that does not answer is
//   ErrorKind::unreachable, never a hang, and never an exception.
// The values it exchanges live in scheduler/model/site_types.h.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/model/fabric_step.h"
#include "scheduler/model/manifest.h"
#include "scheduler/model/preflight.h"
#include "scheduler/model/probe_result.h"
#include "scheduler/model/site_types.h"

namespace orch {

class SiteCopier;  // scheduler/transfer_port.h

class ClusterPort {
 public:
  virtual ~ClusterPort() = default;

  virtual Result<SiteInventory> inventory() = 0;
  // Starts the attempt, or returns the launch the site already has for request.token with
  // `adopted` set (see above).
  virtual Result<LaunchResult> launch(const LaunchRequest& request) = 0;
  // What the site has for this token, without launching; nullopt: it has never seen it. Not
  // needed before a launch (launch() does its own lookup); for callers that only ask.
  virtual Result<std::optional<LaunchResult>> find(const std::string& token) = 0;
  virtual Result<RunObservation> observe(const std::string& token, std::uint64_t output_offset) = 0;
  // A poll round: every watched attempt of the site at once, so that a provider can ask its
  // site one question for all of them (Slurm: one squeue). One answer per request, in order,
  // each what observe() would have answered; the answers stop early only after one that is
  // ErrorKind::unreachable (the site went silent, the rest were not asked). The default asks
  // observe() for each request in turn.
  virtual std::vector<Result<RunObservation>> observe_many(
      const std::vector<ObserveRequest>& requests) {
    std::vector<Result<RunObservation>> answers;
    answers.reserve(requests.size());
    for (const auto& r : requests) {
      answers.push_back(observe(r.token, r.output_offset));
      if (!answers.back() && answers.back().error().kind == ErrorKind::unreachable) break;
    }
    return answers;
  }
  // Asks the attempt to stop (a signal it can catch to save a checkpoint). Idempotent: cancelling
  // an exited or unknown token succeeds.
  virtual Result<void> cancel(const std::string& token) = 0;
  // Sends the attempt's processes `signal` (USR1, USR2, INT or HUP, without SIG), a request to
  // save a checkpoint that stops nothing (preemption, docs/scheduling.md). Succeeds for an
  // exited or unknown token. ErrorKind::unsupported where the provider cannot deliver one (the
  // brain then stops the attempt after its grace, with TERM, which the protocol also saves on).
  virtual Result<void> signal(const std::string& token, const std::string& signal) {
    (void)token;
    (void)signal;
    return make_error(ErrorKind::unsupported, "this provider cannot signal a running attempt");
  }
  // Up to max_bytes of the attempt's combined output starting at offset (for `job logs`).
  virtual Result<std::string> read_output(const std::string& token, std::uint64_t offset,
                                          std::size_t max_bytes) = 0;
  // Runs the probe on the requested nodes and returns one result per node that answered (a node
  // that did not answer is absent; the caller treats it as failed). Blocks for the round.
  virtual Result<std::vector<ProbeResult>> probe_nodes(const ProbeRequest& request) {
    (void)request;
    return make_error(ErrorKind::unsupported, "this provider cannot run node probes yet");
  }
  // One round of burn-in's fabric step (issue 43, scheduler/model/fabric_step.h): every pair
  // of the request runs all-reduce between its two nodes, all pairs at once; one result per
  // pair, in order (a pair that gave no figure carries its error). Blocks for the round, bounded
  // by request.timeout_s. The default cannot: the brain admits the cluster without the step.
  virtual Result<std::vector<FabricPairResult>> fabric_round(const FabricRoundRequest& request) {
    (void)request;
    return make_error(ErrorKind::unsupported, "this provider cannot run the fabric step");
  }
  // Storage (checkpoints, datasets), on the host that sees the site's shared filesystem (Slurm:
  // the login node over SSH; local: this host). ErrorKind::not_found when the path does not
  // exist; unreachable when the site does not answer; forbidden when request.within is set and
  // the copy, its symbolic links resolved, is not strictly inside it (nothing is read).
  virtual Result<Manifest> manifest(const ManifestRequest& request) {
    (void)request;
    return make_error(ErrorKind::unsupported, "this provider cannot list storage yet");
  }
  // Deletes a file or directory tree (a checkpoint past the retention policy). A path that does
  // not exist is not an error. Refuses relative paths and a request without `within`
  // (ErrorKind::invalid), and deletes nothing when the path, its symbolic links resolved, is not
  // strictly inside request.within (ErrorKind::forbidden); a link is removed, never followed.
  virtual Result<void> remove_path(const RemoveRequest& request) {
    (void)request;
    return make_error(ErrorKind::unsupported, "this provider cannot delete from storage yet");
  }
  // Simulated outage (local sites only): down kills the site's processes and makes every call
  // answer unreachable until it is brought up again.
  virtual Result<void> set_outage(bool down) {
    (void)down;
    return make_error(ErrorKind::unsupported, "this provider cannot simulate an outage");
  }
  // The preflight (`orchestrate cluster check`, scheduler/model/preflight.h): every check of
  // what a launch needs, in order, each one line; a check that cannot be tried because an
  // earlier one failed is skipped. Bounded like every call; never an error: a site that does
  // not answer is a failed check. The default has nothing to check.
  virtual std::vector<PreflightCheck> preflight() { return {}; }
  // The site's own way to copy between its storage and this host, when rsync cannot reach it
  // (SiteCopier, scheduler/transfer_port.h); null when it can.
  virtual SiteCopier* copier() { return nullptr; }
};

}  // namespace orch
