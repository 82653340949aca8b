#pragma once
// One thread per site for its storage actions from the outbox (issue 5): `manifest` (list and
// hash a checkpoint or dataset copy) and `remove` (retention). Hashing a large checkpoint takes
// minutes, so these run beside the site worker, never in the way of the polls that watch jobs.
// Like the site worker it reads the store through its own connection and never writes it: each
// result goes to the brain as an event. A site that does not answer leaves the action pending
// for the next round.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>

#include "scheduler/brain/brain_event.h"
#include "scheduler/cluster_port.h"
#include "scheduler/runtime/worker_loop.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/store/store_reader.h"

namespace orch {

class StorageWorker {
 public:
  using Post = std::function<void(BrainEvent)>;

  StorageWorker(ClusterSpec spec, ClusterPort& port, std::unique_ptr<StoreReader> reader,
                Post post);
  ~StorageWorker();
  StorageWorker(const StorageWorker&) = delete;
  StorageWorker& operator=(const StorageWorker&) = delete;

  void start();
  void stop();
  void wake();
  // One round: every pending storage action of the site, oldest first (tests drive it).
  void run_once();

 private:
  void execute(const OutboxRow& action);

  ClusterSpec spec_;
  ClusterPort& port_;
  std::unique_ptr<StoreReader> reader_;
  Post post_;
  // Actions posted to the brain and perhaps not yet marked done, with the round of posting; one
  // still pending kRetryRounds later is carried out again (the brain's transaction may have
  // failed; listings and deletions are idempotent).
  std::map<std::int64_t, long> posted_;
  static constexpr long kRetryRounds = 100;
  long round_ = 0;

  WorkerLoop loop_;
};

// Site workers leave these action kinds to the storage worker.
inline bool is_storage_action(ActionKind kind) {
  return kind == ActionKind::manifest || kind == ActionKind::remove;
}

}  // namespace orch
