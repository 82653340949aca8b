#pragma once
// The simulated fleet (issue 19): clusters of nodes that fail, attempts that train on them, and
// the checkpoints they leave. A discrete-event world with no clock of its own: the simulation
// moves it with advance_to(t), and the sites (sim_site.h) answer from it as it stands at that
// time. Times are seconds since the simulation's start.
//
// What happens in it:
// - Nodes fail by their cluster's FailureTrace (a renewal process per node; lemons fail more
//   often). A failed node is down for the cluster's repair time. An attempt holding it ends as
//   node_lost, naming it, with the cause the trace drew.
// - An attempt is queued until its cluster has enough free, up nodes outside its exclude list,
//   then takes restart_s (R: queueing, loading the model and data) before its first step. It
//   trains at gang_step_s of its cluster's MFU and its slowest node, saves at its job's
//   checkpoint steps, prints a progress line every progress_every_s and a checkpoint line at each
//   completed save (the progress protocol, as a real job does).
// - Outages: the whole cluster stops answering and its attempts die. Blips: it stops answering
//   for a while, the attempts run on.
// - Each job's ground truth: the steps it keeps (and where and how fast each was made), steps
//   lost to rollbacks, every interruption with its cause, when it was seen and when training
//   resumed. Reports are made from this, never from what a policy believes.
//
// Deterministic: the same seed and the same calls give the same world, bit for bit.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/model/manifest.h"
#include "scheduler/model/progress_line.h"
#include "scheduler/model/site_types.h"
#include "simulator/world/failure_model.h"
#include "simulator/world/sim_random.h"
#include "simulator/world/training_run.h"

namespace orch::sim {

// What a job trains, looked up by the launch's job name.
struct SimJob {
  std::string name;
  double flops_per_step = 0;          // FLOPs of one optimizer step of the whole gang (> 0)
  std::int64_t tokens_per_step = 0;   // printed with each progress line (for the brain's MFU)
  std::int64_t total_steps = 0;       // the job's length (> 0)
  std::int64_t checkpoint_every = 0;  // steps between saves; 0: never saves
  double save_s = 0;                  // seconds a save blocks training (C)
  std::int64_t checkpoint_bytes = 1'000'000'000;  // one checkpoint's size, for its copies
  // Tiered saves (issue 38): the save's blocking part (save_s) writes to the first node's own
  // disk, then a drain of drain_s copies it to the shared storage in the background, the newest
  // only (a newer save supersedes a drain under way). 0: every save goes to shared storage.
  double drain_s = 0;
  // Failures of the job itself, whatever its size (software, the network between its nodes):
  // a run fails at this mean time from its grant, beside its nodes' failures. 0: none.
  double mtbf_s = 0;
};

struct SimCluster {
  std::string name;
  int nodes = 1;
  int gpus_per_node = 8;
  double peak_flops_per_gpu = 989e12;  // H100 dense BF16
  double mfu = 0.4;                    // what a healthy gang of this cluster reaches
  FailureLaw law{FailureLaw::Kind::exponential, 6.0 * 30 * 24 * 3600, 1};
  double lemon_fraction = 0;      // share of nodes that are lemons
  double lemon_multiplier = 20;   // a lemon's failure rate over a normal node's
  double slow_fraction = 0;       // share of nodes that run slow (miscabled, throttled)
  double slow_speed = 0.5;        // a slow node's speed (1 nominal)
  double restart_s = 600;         // R: from the nodes granted to the first step
  double repair_s = 4 * 3600;     // a failed node is down this long
  double outage_mtbf_s = 0;       // mean time between outages of the whole cluster; 0: none
  double outage_s = 3600;         // how long one lasts
  double blip_mtbf_s = 0;         // mean time between network blips; 0: none
  double blip_s = 60;             // how long the site does not answer in one
  double progress_every_s = 600;  // how often jobs print a progress line
  std::string checkpoint_root = "/sim/ckpt";
  // Hot spares (issue 38): nodes held idle, burned in, for the job's next relaunch. A run that
  // resumes after an interruption while one is held starts spare_restart_s after its grant
  // instead of restart_s; the spare used is replaced burn_in_s later (a free node burned in).
  // They are paid for all along (the report's GPU-hours paid).
  int spares = 0;
  double spare_restart_s = 30;
  double burn_in_s = 600;

  Result<void> check() const;
};

// One interruption of a job: a run ended by the world, not by completing or being cancelled.
struct Interruption {
  double at_s = 0;
  std::string cluster;
  std::string cause;
  std::optional<double> seen_s;     // when a site first reported the end
  std::optional<double> resumed_s;  // when the job's next run made its first step
};

// A stretch of the steps a job keeps: [from, to) made at step_s on a cluster at mfu.
struct KeptSteps {
  std::int64_t from = 0;
  std::int64_t to = 0;
  double step_s = 0;
  std::string cluster;
};

struct JobTruth {
  // The steps the job's model holds, in step order, contiguous from 0: those of the checkpoint
  // its newest run resumed from (each made where and how fast it was made, whichever runs made
  // them, even a run whose progress a later rollback had undone) and that run's own.
  std::vector<KeptSteps> kept;
  std::int64_t steps_made = 0;  // by every run of the job, kept or not
  std::int64_t steps_lost = 0;  // made and not kept: steps_made - kept_steps()
  std::vector<Interruption> interruptions;
  std::optional<double> first_step_s;  // when its first run started training
  std::optional<double> completed_s;
  int runs = 0;
  double gpu_seconds_held = 0;  // GPUs x seconds its runs held nodes (queued for R included)
  std::set<std::string> excluded_nodes;  // every node a launch asked to avoid
  std::int64_t kept_steps() const { return kept.empty() ? 0 : kept.back().to; }
};

class SimWorld {
 public:
  // Invalid, naming what, for a cluster or job that cannot be simulated (or a duplicate name).
  static Result<std::unique_ptr<SimWorld>> make(std::uint64_t seed,
                                                std::vector<SimCluster> clusters,
                                                std::vector<SimJob> jobs, CauseMix causes);
  SimWorld(const SimWorld&) = delete;
  SimWorld& operator=(const SimWorld&) = delete;

  // Moves the world to t (>= now): failures, repairs, outages and blips up to t, in time order.
  void advance_to(double t);
  double now() const { return now_; }
  // The earliest time after `after` at which something a site would report changes at cluster
  // c: a line printed, a run queued, started, ended, a node down or up, the site silent or back.
  // +infinity when nothing will.
  double next_change(std::size_t c, double after) const;

  std::size_t cluster_count() const { return clusters_.size(); }
  std::optional<std::size_t> cluster_index(const std::string& name) const;
  const SimCluster& cluster(std::size_t c) const { return clusters_[c].spec; }

  // What the sites answer (sim_site.h); every call is at now(). A site in an outage or a blip
  // answers nothing: the caller checks reachable() first.
  bool reachable(std::size_t c) const;
  SiteInventory inventory(std::size_t c) const;
  Result<LaunchResult> launch(std::size_t c, const LaunchRequest& request);
  std::optional<LaunchResult> find(std::size_t c, const std::string& token) const;
  RunObservation observe(std::size_t c, const std::string& token, std::uint64_t offset);
  void cancel(std::size_t c, const std::string& token);
  std::string read_output(std::size_t c, const std::string& token, std::uint64_t offset,
                          std::size_t max_bytes);
  // The copy at `path` at cluster c: one file whose size and hash follow from the job and step
  // it holds, so that a faithful copy elsewhere lists the same. nullopt: no such copy.
  std::optional<Manifest> manifest(std::size_t c, const std::string& path) const;
  void remove(std::size_t c, const std::string& path);
  // A copy of `from` at cluster `from_c` made at cluster `to_c` as `to` (a transfer finished).
  // false when the source is gone.
  bool copy(std::size_t from_c, const std::string& from, std::size_t to_c, const std::string& to);
  // Bytes of the copy at `path`, 0 when there is none.
  std::int64_t copy_bytes(std::size_t c, const std::string& path) const;

  // The newest checkpoint of `job` held at cluster c (for policies that look at the site's
  // storage themselves), nullopt when none.
  std::optional<std::string> newest_checkpoint(std::size_t c, const std::string& job) const;

  // Ground truth, for the report. Runs still going count the steps they have made by now.
  JobTruth truth(const std::string& job) const;
  const std::vector<SimJob>& jobs() const { return jobs_; }
  // Failures drawn so far at cluster c (whether or not they hit a run), by cause.
  const std::map<std::string, int>& failures(std::size_t c) const { return clusters_[c].failures; }
  std::int64_t lines_printed() const { return lines_printed_; }

 private:
  struct Node {
    std::string name;
    double speed = 1;
    double down_until = -1;
    std::optional<std::size_t> held_by;  // run index
  };
  struct Copy {
    std::size_t job = 0;
    std::int64_t step = 0;
    bool on_node = false;  // a tiered save's first copy, on a node's own disk
    std::size_t run = 0;   // the run that saved it: its steps are that run's lineage and own
  };
  struct Cluster {
    SimCluster spec;
    FailureTrace trace;
    std::vector<Node> nodes;
    SimRandom outage_random;
    SimRandom blip_random;
    // The next (or current) outage and blip: [start, end).
    double outage_start = 0, outage_end = 0;
    double blip_start = 0, blip_end = 0;
    bool in_outage = false, in_blip = false;
    std::set<std::size_t> live;     // runs not ended
    std::multiset<double> repairs;  // when down nodes come back
    std::map<std::string, Copy> copies;
    int hot_spares = 0;                       // spares held and burned in now
    std::multiset<double> refills;            // when used spares are back, burned in
    std::map<std::string, std::size_t> runs;  // token -> run index
    std::map<std::string, int> failures;
  };
  struct Run {
    std::string token;
    std::size_t cluster = 0;
    std::size_t job = 0;
    int nodes_needed = 0;
    std::set<std::string> exclude;
    // The job's own checkpoint directory the launch named (LaunchRequest::checkpoint_dir), where
    // its checkpoints go; empty: <checkpoint_root>/<job name>, as before there was one.
    std::string checkpoint_dir;
    // ORCH_LOCAL_CHECKPOINT_DIR as launched ("{node}" in it), where tiered saves go; empty:
    // /sim/local/{node}/<job name>.
    std::string node_dir;
    std::vector<std::size_t> nodes;  // empty until granted
    double granted_s = 0;
    double launched_s = 0;
    double ready_s = 0;  // the first step (granted + restart_s); +inf until granted
    std::int64_t start_step = 0;
    // The steps the checkpoint it resumed from holds, [0, start_step) (lineage_of); empty for a
    // run from scratch.
    std::vector<KeptSteps> lineage;
    // Its job's own failure (SimJob::mtbf_s), drawn at its grant; +inf: none.
    double job_fails_s = std::numeric_limits<double>::infinity();
    TrainingShape shape;
    TrainingProgress cursor;     // at the last printed save (or the start)
    std::int64_t draining = -1;  // the step whose drain is under way (tiered saves); -1: none
    double drained_s = 0;        // when that drain completes
    double next_progress_s = 0;
    double completes_s = 0;
    std::string output;
    bool exited = false;
    ExitStatus exit;
    double ended_s = 0;
    bool seen_exit = false;
    std::optional<std::size_t> interruption;  // its entry in the job's truth, when it was one
  };

  SimWorld(std::vector<SimJob> jobs, CauseMix causes);
  // The next world event (failure, repair, outage or blip edge) at cluster c.
  double next_event(std::size_t c) const;
  void apply_next_event(std::size_t c);
  void node_fails(std::size_t c, const NodeFailure& f);
  void outage_starts(std::size_t c);
  // Grants nodes to the runs of cluster c waiting for them, oldest first.
  void grant_waiting(std::size_t c);
  bool grant(Run& run, std::size_t run_index);
  // Prints the run's lines up to t (at most its end), completes it when it reaches its end.
  void print_until(Run& run, double t);
  // One protocol line on the run's output, as a real job prints it.
  void print_line(Run& run, const ProgressLine& line);
  // A completed save at save_at: its line (and copy) on a node's own disk, whose drain starts,
  // or on the shared storage.
  void record_save(Run& run, std::int64_t step, double save_at);
  void record_drain(Run& run);
  // Seconds from nodes granted to the first step: a held spare's when the run resumes the job
  // after an interruption and one is there (it is used), else the cluster's restart.
  double restart_for(Cluster& c, const JobTruth& truth);
  void end_run(std::size_t run_index, double at, ExitStatus exit);
  std::string checkpoint_path(const Run& run, std::int64_t step) const;
  // The steps a checkpoint holds, contiguous from 0: its run's lineage and that run's own steps.
  std::vector<KeptSteps> lineage_of(const Copy& copy) const;
  // The job's own failure ends the run (SimJob::mtbf_s).
  void job_fails(std::size_t run_index);
  std::optional<std::size_t> run_of(std::size_t c, const std::string& token) const;

  CauseMix causes_;  // the traces point into it
  std::vector<Cluster> clusters_;
  std::vector<SimJob> jobs_;
  std::vector<Run> runs_;
  std::vector<JobTruth> truth_;
  // Per job: the run its truth follows (the newest granted), whose steps are the ones kept.
  std::vector<std::optional<std::size_t>> current_;
  std::vector<SimRandom> job_random_;  // per job: its own failures
  double now_ = 0;
  std::int64_t lines_printed_ = 0;
};

}  // namespace orch::sim
