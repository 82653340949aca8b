#pragma once
// Everything the brain reacts to. API commands come from REST/CLI, observations and action
// results from site workers, ticks from the clock. The brain handles one at a time.

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"
#include "scheduler/model/fabric_step.h"
#include "scheduler/model/node_state.h"
#include "scheduler/model/preflight.h"
#include "scheduler/model/probe_result.h"
#include "scheduler/model/progress_line.h"
#include "scheduler/model/site_types.h"
#include "scheduler/model/submitter.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/job_spec.h"
#include "scheduler/transfer_port.h"

namespace orch {

struct SubmitJob {
  JobSpec spec;
  // Who asks (from the API token): the team and priority they may give the job are checked
  // against it. The default acts for any team (the server itself, tests, the simulator).
  Submitter submitter;
};

struct CancelJob {
  std::int64_t job_id = 0;
};

// A site worker executed (or adopted, after a restart) a launch from the outbox.
struct LaunchCompleted {
  std::int64_t outbox_id = 0;
  std::string token;
  Result<LaunchResult> result = LaunchResult{};
  bool adopted =
      false;  // the site already had this token (launched before a crash): nothing new started
  // Which checkpoint the site worker's pre-launch check chose, and the newer ones it refused.
  ResumeChoice resume;
};

// The site carried out a cancel, or a signal action (a save request) when `signalled` is set.
struct CancelCompleted {
  std::int64_t outbox_id = 0;
  std::string token;
  Result<void> result;
  bool signalled = false;
};

// What a site worker saw of one attempt in one poll, with the progress lines it printed.
struct AttemptObserved {
  std::string cluster;
  std::string token;
  RunPhase phase = RunPhase::unknown;
  std::optional<ExitStatus> exit;
  std::vector<std::string> nodes;
  std::vector<ProgressLine> reports;
  std::vector<std::string> bad_lines;  // protocol lines that did not parse, with the reason
  // When phase == exited: the attempt's last ordinary (non-protocol) output lines, oldest first
  // (at most 64), for the failure classifier's log signatures.
  std::vector<std::string> log_tail;
  // What the tasks' agents raise while it runs (issue 43: io_stall), repeated on every poll.
  std::vector<TaskAlert> alerts;
  // When phase == queued: the site's words for why it holds the attempt back
  // (RunObservation::waiting), shown as the job's reason while it waits there.
  std::string waiting;
};

// The site's list of nodes (polled now and then, and whenever it may have changed).
struct InventoryObserved {
  std::string cluster;
  SiteInventory inventory;
};

struct SiteUnreachable {
  std::string cluster;
  std::string message;
};

struct SiteReachable {
  std::string cluster;
};

// A site's preflight ran (at the worker's start, on a reload, after a launch failed on the
// server's own configuration, or asked for with `orchestrate cluster check`): every check, in
// order (scheduler/model/preflight.h). One that failed keeps the cluster out of placement.
struct PreflightObserved {
  std::string cluster;
  std::vector<PreflightCheck> checks;
};

// A site worker ran a probe action from the outbox (burn-in or a release check).
struct ProbeCompleted {
  std::int64_t outbox_id = 0;
  std::string cluster;
  std::string token;
  Result<std::vector<ProbeResult>> result = std::vector<ProbeResult>{};
};

// A site worker ran a fabric step from the outbox (burn-in's node pairs, issue 43): every pair
// of every round, or why the step could not run.
struct FabricCompleted {
  std::int64_t outbox_id = 0;
  std::string cluster;
  std::string token;
  Result<std::vector<FabricPairResult>> result = std::vector<FabricPairResult>{};
};

// `orchestrate cluster burn-in NAME`: probe every node now and judge them.
struct StartBurnIn {
  std::string cluster;
};

// `orchestrate cluster drain|activate|retire`: a person changes a cluster's admission to
// draining, active or retired (node_state.h, Admission).
struct SetClusterAdmission {
  std::string cluster;
  Admission to = Admission::draining;
  std::string reason;
};

// `orchestrate cluster add`, or a reload that finds a new cluster in the clusters file: clusters
// that join the running server, each admitted as at start (pending-delivery, burn-in or
// active). With a document, each is remembered in the store so that the next start knows it.
struct AddClusters {
  std::vector<ClusterSpec> clusters;
  std::string source;    // where the document came from, for people
  std::string document;  // the clusters document they came in; empty: the clusters file has them
};

// `orchestrate ticket open|update|close`: the support record with a cluster's provider.
struct OpenTicket {
  std::string cluster;
  std::string summary;
  std::vector<std::string> nodes;  // the nodes it concerns (listed by the site)
  std::string incident;            // a node-ledger incident it concerns, or empty
};
struct NoteTicket {
  std::int64_t ticket_id = 0;
  std::string text;
  bool from_provider = false;  // the provider's answer (the first one is its first response)
};
struct CloseTicket {
  std::int64_t ticket_id = 0;
  std::string resolution;
};

// `orchestrate node quarantine|release`: a person overrides the rules.
struct SetNodeState {
  std::string cluster;
  std::string node;
  NodeState to = NodeState::active;
  std::string reason;
};

// A site worker listed a copy (manifest action): to register a new checkpoint or dataset copy,
// verify a transferred one, or audit one. `payload` is the action's payload, echoed.
struct ManifestCompleted {
  std::int64_t outbox_id = 0;
  std::string cluster;
  nlohmann::json payload;
  Result<Manifest> result = Manifest{};
};

// A site worker deleted a copy (remove action; retention).
struct RemoveCompleted {
  std::int64_t outbox_id = 0;
  std::string cluster;
  nlohmann::json payload;
  Result<void> result;
};

// The transfer worker started a copy (first report) or has new progress.
struct TransferProgressed {
  std::int64_t transfer_id = 0;
  TransferProgress progress;
};

// The transfer worker's copy ended (not yet verified).
struct TransferFinished {
  std::int64_t transfer_id = 0;
  Result<TransferOutcome> result = TransferOutcome{};
};

// `orchestrate data add NAME --cluster C --path P`: a dataset copy that already exists there.
struct RegisterDataset {
  std::string name;
  std::string cluster;
  std::string path;
};

// `orchestrate data replicate`: copy a dataset, or a job's newest verified checkpoint, to a
// cluster.
struct ReplicateData {
  std::string dataset;      // either this ...
  std::int64_t job_id = 0;  // ... or this
  std::string to;
};

// `orchestrate data audit [--cluster C]`: check every copy now (empty: every cluster).
struct StartAudit {
  std::string cluster;
};

struct Tick {};

using BrainEvent = std::variant<SubmitJob, CancelJob, LaunchCompleted, CancelCompleted,
                                AttemptObserved, InventoryObserved, SiteUnreachable, SiteReachable,
                                PreflightObserved, ProbeCompleted, StartBurnIn, SetNodeState,
                                SetClusterAdmission, AddClusters, OpenTicket, NoteTicket,
                                CloseTicket, ManifestCompleted, RemoveCompleted, TransferProgressed,
                                TransferFinished, RegisterDataset, ReplicateData, StartAudit,
                                FabricCompleted, Tick>;

// What a command returns to its caller (REST handler).
// One job a submit made (a sweep makes one per point).
struct SubmittedJob {
  std::int64_t id = 0;
  std::string name;
  std::string state;
};

struct BrainReply {
  std::int64_t job_id = 0;
  std::string state;
  std::int64_t transfer_id = 0;  // ReplicateData: the transfer started (0: none needed)
  std::int64_t ticket_id = 0;    // the ticket a ticket command opened or changed
  std::string message;           // what a data command did, for people
  // SubmitJob: every job it made, in point order (one unless a sweep); job_id is the first.
  std::vector<SubmittedJob> jobs;
};

}  // namespace orch
