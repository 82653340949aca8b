#pragma once
// The transfer worker's part in a simulation: the copies the brain queues (checkpoint
// replication, staging) are made between the world's sites at the scenario's bandwidth, in
// simulated time. A copy reports its start, takes bytes / bandwidth, and then exists at the
// destination; a site that does not answer when it is due fails it as unreachable (the brain
// retries). The real TransferWorker runs rsync on threads of its own, which a simulated clock
// cannot drive: this plays the same events to the brain.

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

#include "scheduler/brain/brain_event.h"
#include "scheduler/store/store_reader.h"
#include "simulator/world/sim_world.h"

namespace orch::sim {

class SimTransfers {
 public:
  using Post = std::function<void(BrainEvent)>;
  SimTransfers(StoreReader& reader, SimWorld& world, std::mutex& lock, double bytes_per_s,
               std::int64_t epoch_ms, Post post);

  // At simulated second t: starts the queued copies that are due, finishes those that are done.
  void step(double t);
  // When the next running copy finishes; +infinity when none runs.
  double next_finish() const;

 private:
  struct Copy {
    double done_s = 0;
    std::int64_t bytes = 0;
    double started_s = 0;
  };
  StoreReader& reader_;
  SimWorld& world_;
  std::mutex& lock_;
  double bytes_per_s_;
  std::int64_t epoch_ms_;
  Post post_;
  std::map<std::int64_t, Copy> running_;  // by transfer id
};

}  // namespace orch::sim
