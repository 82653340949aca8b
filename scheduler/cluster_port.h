#pragma once
// The one interface every provider implements (local processes, Slurm over SSH, Kubernetes).
// The brain never calls it: site workers (scheduler/runtime) do, on their own thread, and turn
// what they see into events for the brain. Every call may block (SSH, HTTP) and may fail with
// ErrorKind::unreachable when the site does not answer, which is different from a failed job.
//
// Idempotency: every launch carries a token that is unique per attempt. A provider must make
// the token findable (run directory name, Slurm job name/comment, Kubernetes label) so that a
// restarted server can ask find() before launching again.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/model/job_state.h"
#include "scheduler/model/manifest.h"
#include "scheduler/model/probe_result.h"

namespace orch {

// A checkpoint the attempt may resume from, with the manifest it was registered with. The site
// worker checks candidates newest first against what the site holds, just before the launch,
// and resumes from the first that matches: a corrupt or partial copy is never used.
struct ResumeCandidate {
  std::int64_t checkpoint_id = 0;
  std::int64_t step = 0;
  std::string path;  // at the launch site
  Manifest manifest;
};

struct LaunchRequest {
  std::string token;  // unique per attempt, e.g. "orch-7-2-5f3a9c"
  std::int64_t job_id = 0;
  int attempt_no = 0;
  std::string job_name;
  std::string command;                     // run by /bin/sh -c
  std::map<std::string, std::string> env;  // includes the resume variable when resuming
  int nodes = 1;
  int gpus_per_node = 1;
  std::vector<std::string> exclude_nodes;
  // No progress line for this long means the job hangs (the agent notes it in its event file;
  // the brain acts on it). 0: never.
  double hang_after_s = 600.0;
  // Newest first. Empty: start from the beginning (or from env's resume variable, if set).
  std::vector<ResumeCandidate> resume_candidates;
  std::string resume_env = "ORCH_RESUME_FROM";  // the variable that carries the chosen path
};

struct LaunchResult {
  std::string site_job_id;         // provider's id (local: agent pid; Slurm: job id)
  std::vector<std::string> nodes;  // nodes the attempt got, when known at launch
  // What the site was asked to run, for the job's events (Slurm: the sbatch command line with
  // its --exclude). Empty when the provider has nothing useful to show.
  std::string submit_command;
};

// What the pre-launch check found (filled by the site worker, not the provider).
struct RejectedCheckpoint {
  std::int64_t checkpoint_id = 0;
  std::int64_t step = 0;
  bool missing = false;  // gone from the site (else present but different)
  std::string why;       // "file model.bin: SHA-256 ..., expected ..."
};
struct ResumeChoice {
  std::optional<std::int64_t> checkpoint_id;  // none: starts from the beginning
  std::int64_t step = 0;
  std::string path;
  std::vector<RejectedCheckpoint> rejected;  // newer candidates that failed the check
};

enum class RunPhase {
  queued,  // accepted by the site, not yet running
  running,
  exited,
  unknown,  // the site does not know this token (never launched, or purged)
};

struct ExitStatus {
  std::optional<int> exit_code;  // set when the process exited normally
  std::optional<int> signal;     // set when a signal killed it
  std::string detail;            // provider's words (Slurm state, pod reason), may be empty
  bool node_lost = false;        // the provider says the node failed under it
  // The cause when the provider states it (Slurm PREEMPTED, TIMEOUT, OUT_OF_MEMORY); it wins
  // over what the exit code and signal would suggest, but not over a cancel orchestrate sent.
  std::optional<ExitCause> cause;
};

struct RunObservation {
  RunPhase phase = RunPhase::unknown;
  std::optional<ExitStatus> exit;  // set when phase == exited
  std::string site_job_id;
  std::vector<std::string> nodes;
  // New complete stdout lines since the offset the caller passed, and the offset to pass next.
  std::vector<std::string> new_lines;
  std::uint64_t next_offset = 0;
};

// One attempt to look at in a poll round (observe_many).
struct ObserveRequest {
  std::string token;
  std::uint64_t output_offset = 0;
};

struct NodeInfo {
  std::string name;
  int gpus = 0;
  bool healthy = true;
  std::string reason;  // why not healthy, in the provider's words
};

struct SiteInventory {
  std::vector<NodeInfo> nodes;
};

// Runs `orchestrate-agent probe` once on each named node (burn-in, or the check that releases a
// quarantined node). On Slurm one job with one task per node; locally one probe per virtual node.
// Lists a checkpoint or dataset copy at the site: every file's size, and the SHA-256 of all
// of them, none, or the named ones (an audit samples).
struct ManifestRequest {
  std::string path;
  enum class Hash { all, none, listed } hash = Hash::all;
  std::vector<std::string> hash_files;  // relative paths, for Hash::listed
};

struct ProbeRequest {
  std::string token;                 // unique per burn-in round, like a launch token
  std::vector<std::string> nodes;    // empty: every node of the site
  std::string dir;                   // filesystem to measure; empty: the site's checkpoint root
                                     // (else its storage root)
  std::int64_t io_bytes = 64 << 20;  // written, fsynced and read back per node
  double compute_s = 1.0;            // wall time of the GEMM benchmark per node
  double timeout_s = 300.0;          // the whole round
};

class ClusterPort {
 public:
  virtual ~ClusterPort() = default;

  virtual Result<SiteInventory> inventory() = 0;
  virtual Result<LaunchResult> launch(const LaunchRequest& request) = 0;
  // nullopt: the site has never seen this token.
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
  // Up to max_bytes of the attempt's combined output starting at offset (for `job logs`).
  virtual Result<std::string> read_output(const std::string& token, std::uint64_t offset,
                                          std::size_t max_bytes) = 0;
  // Runs the probe on the requested nodes and returns one result per node that answered (a node
  // that did not answer is absent; the caller treats it as failed). Blocks for the round.
  virtual Result<std::vector<ProbeResult>> probe_nodes(const ProbeRequest& request) {
    (void)request;
    return make_error(ErrorKind::unsupported, "this provider cannot run node probes yet");
  }
  // Storage (checkpoints, datasets), on the host that sees the site's shared filesystem (Slurm:
  // the login node over SSH; local: this host). ErrorKind::not_found when the path does not
  // exist; unreachable when the site does not answer.
  virtual Result<Manifest> manifest(const ManifestRequest& request) {
    (void)request;
    return make_error(ErrorKind::unsupported, "this provider cannot list storage yet");
  }
  // Deletes a file or directory tree (a checkpoint past the retention policy). A path that does
  // not exist is not an error. Refuses "/" and relative paths (ErrorKind::invalid).
  virtual Result<void> remove_path(const std::string& path) {
    (void)path;
    return make_error(ErrorKind::unsupported, "this provider cannot delete from storage yet");
  }
  // Simulated outage (local sites only): down kills the site's processes and makes every call
  // answer unreachable until it is brought up again.
  virtual Result<void> set_outage(bool down) {
    (void)down;
    return make_error(ErrorKind::unsupported, "this provider cannot simulate an outage");
  }
};

}  // namespace orch
