#pragma once
// The provider scorecard, pure arithmetic over facts the store hands it (brain/reports.h
// gathers them). One card per cluster, then one per vendor (clusters rented from the same
// company, ClusterSpec::vendor) over the same facts.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/model/job_state.h"

namespace orch {

struct ClusterFact {
  std::string name;
  std::string vendor;
  Millis since_ms = 0;  // when orchestrate first knew it (start of its observed time)
  int nodes = 0;
  int quarantined_nodes = 0;           // quarantined or retired now
  std::optional<Millis> promised_ms;   // the delivery its provider promised, when ordered so
  std::optional<Millis> delivered_ms;  // when it arrived (nullopt: not yet, or never ordered)
};

struct AttemptFact {
  std::string cluster;
  std::int64_t job_id = 0;
  int no = 0;
  int gpus = 0;
  int nodes = 0;
  Millis started_ms = 0;
  std::optional<Millis> running_ms;  // when it was first seen running
  std::optional<Millis> ended_ms;    // nullopt: still live (counted up to now)
  // Its last sign of life before the verdict that ended it (AttemptRow::last_alive_ms): its
  // last progress line, its failed task's last heartbeat, its site's last answer.
  std::optional<Millis> last_alive_ms;
  ExitCause cause = ExitCause::none;
  std::optional<double> mfu;  // work over time; null when unknown or flagged implausible
  double mfu_time_s = 0;      // the step time it was measured over (0: unknown, weighs 1 s)
  // When the restart policy let it start, and its first progress line (AttemptRow's): the
  // recovery's parts (health/recovery_breakdown.h).
  std::optional<Millis> due_ms;
  std::optional<Millis> first_progress_ms;
};

// Several attempts' MFU combined as work over time: each weighted by the step time it was
// measured over, so the figure is the cluster's total model FLOPs over its total time at peak.
// Not a median or a mean of attempts: ten minutes of a fast run would count as much as a day of
// a slow one, and a jittery cluster would look better than it delivers.
struct MfuOverTime {
  double work = 0;    // sum of MFU x seconds
  double time_s = 0;  // sum of seconds
  void add(double mfu, double seconds) {
    const double s = seconds > 0 ? seconds : 1.0;
    work += mfu * s;
    time_s += s;
  }
  void add(const MfuOverTime& o) {
    work += o.work;
    time_s += o.time_s;
  }
  std::optional<double> value() const {
    if (!(time_s > 0)) return std::nullopt;
    return work / time_s;
  }
};

struct HealthChange {
  std::string cluster;
  Millis at_ms = 0;
  bool up = true;  // healthy; false for unreachable or down
};

// Checkpoints carry no time: the store hands over those saved within the window.
struct CheckpointFact {
  std::string cluster;
  double save_time_s = 0;
};

struct NodeFailureFact {
  std::string cluster;
  std::string node;
  Millis at_ms = 0;
};

// A support ticket with the cluster's provider (brain/support_desk.h).
struct TicketFact {
  std::string cluster;
  Millis opened_ms = 0;
  std::optional<Millis> first_response_ms;
  std::optional<Millis> resolved_ms;
};

struct ScorecardInputs {
  Millis now = 0;
  Millis window_start = 0;  // facts before this are ignored (default: everything)
  std::vector<ClusterFact> clusters;
  std::vector<AttemptFact> attempts;
  std::vector<HealthChange> health;
  std::vector<CheckpointFact> checkpoints;
  std::vector<NodeFailureFact> node_failures;
  std::vector<TicketFact> tickets;
  // The cluster of each io stall (one per save) within the window (issue 43).
  std::vector<std::string> io_stalls;
};

// Every figure is over the window [window_start, now]; facts outside it are ignored. A vendor
// card sums its clusters' facts (time, hours, counts, samples) and computes the figures from
// the sums, so a big cluster weighs more than a small one (it is not an average of cards).
struct Scorecard {
  std::string name;
  std::string kind;                   // "cluster" | "vendor"
  std::vector<std::string> clusters;  // the cluster itself, or the vendor's clusters
  // Time the site was up / time observed, over [max(window_start, since_ms), now] from the
  // health changes (before its first change a site counts as up). 1 when nothing was observed.
  double availability = 1.0;
  // Sum over attempts of gpus x the overlap of [started_ms, ended_ms or now] with the window.
  double gpu_hours = 0;
  // Attempts that ended within the window with an infra cause other than time_limit (a time
  // limit is the provider keeping its word, not a fault). Preemptions and failed launches
  // count: the provider took or refused the nodes.
  int interruptions = 0;
  std::optional<double> interruptions_per_1k_gpu_h;  // interruptions / gpu_hours x 1000
  // Node-hours under attempts (nodes x the same overlap) / node failures within the window;
  // nullopt without a failure (the MTBF is then at least the node-hours).
  std::optional<double> node_mtbf_h;
  // An interruption's restart in two parts (restart_samples), counted for the cluster where it
  // happened: detection, from the attempt's last sign of life to orchestrate's verdict, and
  // recovery, from the verdict to the next attempt running. Median and nearest-rank p95.
  std::optional<double> detection_median_s;
  std::optional<double> detection_p95_s;
  std::optional<double> recovery_median_s;
  std::optional<double> recovery_p95_s;
  // The recovery's parts, medians (recovery_breakdown.h): the restart policy's backoff, the
  // brain placing the job, the site's queue and launch; then the job's own start to its first
  // progress line, which the recovery above does not include.
  std::optional<double> backoff_median_s;
  std::optional<double> placing_median_s;
  std::optional<double> site_median_s;
  std::optional<double> startup_median_s;
  // MFU of the attempts live in the window, work over time (MfuOverTime): the served JSON keeps
  // its older name, median_mfu.
  std::optional<double> mfu;
  std::optional<double> checkpoint_save_p95_s;  // nearest-rank p95 of every save time there
  // Storage health (issue 43, docs/health.md "I/O stalls"): checkpoint saves there that ran past
  // their bound (io_stall), one per save, within the window.
  int io_stalls = 0;
  int nodes = 0;
  int quarantined_nodes = 0;
  double quarantined_share = 0;  // quarantined_nodes / nodes; 0 without nodes
  // The support record: tickets open now and opened within the window; the median hours from
  // opening to the provider's first response (over first responses within the window) and to
  // resolution (over tickets resolved within the window); nullopt without one.
  int open_tickets = 0;
  int tickets = 0;
  std::optional<double> ticket_response_median_h;
  std::optional<double> ticket_resolution_median_h;
  // Delivery: days from the promised date to delivery (negative: early); for a cluster still
  // awaiting delivery past its promise, the days late so far (awaiting_delivery set). nullopt
  // without a promise, or before it. A vendor's: the median over its clusters that have one.
  std::optional<double> delivery_delay_days;
  bool awaiting_delivery = false;
};

// Whether an attempt that ended with this cause counts as an interruption (see above).
bool is_interruption(ExitCause cause);

// Per cluster, its interruptions that ended in the window, in seconds: detection_s, ended_ms -
// last_alive_ms for each whose sign of life is known (attempts ended before it was recorded have
// none); recovery_s, the next attempt's (same job, no + 1, on any cluster) running_ms - ended_ms,
// for each whose next attempt ran.
// The recovery's parts (recovery_breakdown.h) of each whose next attempt has reached them:
// backoff_s and placing_s for every next attempt, site_s once it ran, startup_s once it printed.
struct RestartSamples {
  std::vector<double> detection_s;
  std::vector<double> recovery_s;
  std::vector<double> backoff_s;
  std::vector<double> placing_s;
  std::vector<double> site_s;
  std::vector<double> startup_s;
};
std::map<std::string, RestartSamples> restart_samples(const ScorecardInputs& in);

// One card per cluster, in input order, then one per vendor, in order of first appearance
// (clusters without a vendor get no vendor card). Facts naming an unknown cluster are ignored.
std::vector<Scorecard> compute_scorecards(const ScorecardInputs& in);

}  // namespace orch
