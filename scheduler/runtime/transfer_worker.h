#pragma once
// The transfer worker (issue 5): carries out the transfers the brain records (queued rows of the
// transfers table, and running ones after a restart: rsync --partial resumes them) through the
// TransferPort, one thread per running transfer, at most `max_parallel` at once. Progress and
// the end of each copy go to the brain as events; the worker never writes the store. While a
// copy runs it reads the transfer's cap from the store about once a second: the brain's
// throttling changes it there, and the runner restarts rsync with the new --bwlimit.
// Dataset copies wait for the transfer windows of both sites; checkpoint copies do not.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "scheduler/brain/brain_event.h"
#include "scheduler/common/clock.h"
#include "scheduler/runtime/worker_loop.h"
#include "scheduler/spec/cluster_registry.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/store/store_reader.h"
#include "scheduler/transfer_port.h"

namespace orch {

class TransferWorker {
 public:
  using Post = std::function<void(BrainEvent)>;

  TransferWorker(const std::vector<ClusterSpec>& clusters, TransferPort& port,
                 std::unique_ptr<StoreReader> reader, Post post, const Clock& clock,
                 int max_parallel = 4);
  ~TransferWorker();
  TransferWorker(const TransferWorker&) = delete;
  TransferWorker& operator=(const TransferWorker&) = delete;

  void start();
  void stop();  // asks running copies to stop (they resume at the next start) and joins them
  void wake();

  // Starts the transfers that are due (public so tests can drive it without the thread).
  void run_once();
  // Copies running now (tests).
  int running() const;
  // A cluster that joined the running server: its transfer windows count from now.
  void cluster_joined(const ClusterSpec& spec) { clusters_.add({spec}); }

 private:
  struct Copy;
  class Control;
  void reap();
  double cap_of(std::int64_t transfer_id);
  bool windows_open(const TransferRow& t, Millis now) const;

  ClusterRegistry clusters_;
  TransferPort& port_;
  std::unique_ptr<StoreReader> reader_;
  mutable std::mutex reader_mu_;  // the copies' threads read caps through the same connection
  Post post_;
  const Clock& clock_;
  int max_parallel_;

  mutable std::mutex mu_;
  std::map<std::int64_t, std::unique_ptr<Copy>> copies_;  // running, by transfer id
  // Copies that ended and were posted (by transfer id, with the row's tries when the copy
  // started), until the brain's row shows it handled them.
  std::map<std::int64_t, int> finished_;
  bool stopping_ = false;  // no new copies
  WorkerLoop loop_;
};

}  // namespace orch
