#pragma once
// The real brain driven over the simulated world, shared by the single-job `orchestrate` policy
// (orchestrate_run.h) and the fleet simulator (fleet_run.h): the brain over a shared in-memory
// SQLite store (`file:...?mode=memory&cache=shared`) and a FakeClock, and per cluster the real
// SiteWorker and StorageWorker over a SimSite, and the simulated transfers, all stepped on one
// thread in one order, so that a seed gives the same run bit for bit.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "adapters/sim/sim_site.h"
#include "scheduler/brain/brain.h"
#include "scheduler/common/clock.h"
#include "scheduler/common/result.h"
#include "scheduler/runtime/site_worker.h"
#include "scheduler/runtime/storage_worker.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/store/store.h"
#include "simulator/sim_transfers.h"
#include "simulator/world/sim_world.h"

namespace orch::sim {

// The clusters file's entry of a simulated cluster: provider sim, its nodes, GPUs and peak, its
// site workers polling every poll_s; node-local saves when the job's saves are tiered.
ClusterSpec sim_cluster_spec(const SimCluster& c, double poll_s, bool tiered);

// The job spec of a simulated job as the policies submit it: its command, size, checkpoint
// directory and interval, the model's FLOPs per token (so the brain measures MFU), and a hang
// limit of three of the slowest cluster's progress intervals plus a poll; the default restart
// policy (its budget and backoff count failures in a row without progress, so a run of weeks
// with hundreds of node failures needs nothing set).
JobSpec sim_job_spec(const SimJob& job, int nodes, int gpus_per_node,
                     const std::vector<SimCluster>& clusters, double poll_s);

// How the harness steps time (simulated seconds).
struct HarnessLoop {
  double end = 0;      // the window simulated
  double poll_s = 30;  // the site workers' poll grid
  double tick_s = 30;  // the brain's timers while anything happens
  // The next arrival of work from outside (a job submitted), +infinity when none; `arrive` is
  // called at that time, after the sites due then were polled. Both may be empty.
  std::function<double()> next_arrival;
  std::function<void(double)> arrive;
  // Whether the work runs steadily (nothing waiting to be placed): then, once nothing happened
  // for two ticks, the brain's timers are looked at every 5 minutes only.
  std::function<bool()> runs_steadily;
};

class BrainHarness {
 public:
  // The brain over `world` (which outlives the harness) with these clusters, in the world's
  // order, and scheduling rules; started (its clusters registered).
  static Result<std::unique_ptr<BrainHarness>> make(SimWorld& world,
                                                    std::vector<ClusterSpec> clusters,
                                                    SchedulingSpec scheduling,
                                                    double transfer_bytes_per_s);
  BrainHarness(const BrainHarness&) = delete;
  BrainHarness& operator=(const BrainHarness&) = delete;
  ~BrainHarness();

  // Submits a job at the clock's present (counted as an event).
  Result<JobId> submit(JobSpec spec);
  // Steps everything from the clock's present to loop.end; then moves the clock and the world
  // to loop.end.
  void run(const HarnessLoop& loop);

  Store& store() { return *store_; }
  FakeClock& clock() { return clock_; }
  std::mutex& world_lock() { return lock_; }
  std::int64_t events() const { return events_; }
  std::int64_t events_refused() const { return events_refused_; }

 private:
  BrainHarness(SimWorld& world, std::unique_ptr<Store> store, std::vector<ClusterSpec> clusters,
               SchedulingSpec scheduling);
  Result<void> start(const std::string& uri, double transfer_bytes_per_s);
  void handle(const BrainEvent& e);
  void drain();
  // The workers carry out what the brain just wrote (a launch, its confirmation, a listing, the
  // next launch ...) at t, before time moves on.
  void settle(double t);

  SimWorld& world_;
  std::unique_ptr<Store> store_;  // held open for the run: the memory database lives with it
  FakeClock clock_;
  std::vector<ClusterSpec> specs_;
  Brain brain_;
  std::mutex lock_;
  std::deque<BrainEvent> events_queue_;
  std::vector<std::unique_ptr<SimSite>> sites_;
  std::vector<std::unique_ptr<SiteWorker>> workers_;
  std::vector<std::unique_ptr<StorageWorker>> storage_;
  std::unique_ptr<StoreReader> transfer_reader_;
  std::unique_ptr<SimTransfers> transfers_;
  std::uint64_t seen_work_ = 0;
  std::int64_t events_ = 0;
  std::int64_t events_refused_ = 0;
};

}  // namespace orch::sim
