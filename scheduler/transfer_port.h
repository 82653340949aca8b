#pragma once
// The interface that moves bytes between sites (checkpoint replication, dataset staging). The
// brain never calls it: the transfer worker (scheduler/runtime/transfer_worker.h) does, on its
// own threads, and turns what it sees into events. The implementation (adapters/transfer) runs
// real rsync: on the destination's login node pulling from the source when the destination can
// reach it, else relayed through the orchestrator host, or locally between local sites.
//
// A run is resumable: calling run() again for the same request continues where the last one
// stopped (rsync --partial), so a crash of the server or a failed attempt costs no re-copy.

#include <cstdint>
#include <string>

#include "scheduler/common/result.h"

namespace orch {

struct TransferEndpoint {
  std::string cluster;
  std::string path;  // absolute, on that cluster's storage
};

struct TransferRequest {
  std::int64_t id = 0;
  TransferEndpoint from;
  TransferEndpoint to;
  bool directory = false;        // copy a directory's contents (else one file)
  std::uint64_t bytes_hint = 0;  // expected size (from the manifest), for progress; 0: unknown
  // Compare files by checksum instead of size and time (a retry after a copy failed its
  // verification: a same-size corrupt file must be copied again).
  bool checksum = false;
};

struct TransferProgress {
  std::uint64_t bytes_done = 0;
  std::uint64_t bytes_total = 0;  // 0: not known yet
  double rate_bytes_per_s = 0;    // as rsync reports it
  int percent = 0;                // 0..100
  double cap_bytes_per_s = 0;     // the cap the running rsync has; 0: none
  std::string route;              // "local", "pull via <dst> login node", "relay via orchestrator"
};

// What the runner asks of its caller while a transfer runs (called from the runner's thread).
class TransferControl {
 public:
  virtual ~TransferControl() = default;
  // New progress (at most a few times a second).
  virtual void progress(const TransferProgress& p) = 0;
  // The cap the transfer should run at now, bytes per second; 0: none. Read about once a
  // second; when it changes the runner restarts rsync with the new --bwlimit (it resumes).
  virtual double cap_bytes_per_s() = 0;
  // True: stop as soon as possible (server stopping, transfer cancelled); run() then fails
  // with ErrorKind::conflict ("stopped").
  virtual bool stop_requested() = 0;
};

struct TransferOutcome {
  std::uint64_t bytes = 0;  // bytes rsync sent (0 when everything was already there)
  double seconds = 0;       // wall time of the whole run, restarts included
  std::string route;
  int restarts = 0;  // rsync restarted for a new cap
};

class TransferPort {
 public:
  virtual ~TransferPort() = default;
  // Blocks until the copy is complete at the destination (not yet verified: the caller then
  // compares the destination's manifest). Errors: unreachable when a site cannot be reached
  // (retry later), io when rsync failed (its stderr's last lines in the message), unsupported
  // when no route exists (a Kubernetes site), invalid for a bad request.
  virtual Result<TransferOutcome> run(const TransferRequest& request, TransferControl& control) = 0;
};

// A site whose storage this host cannot reach with rsync, only through the site itself (a
// Kubernetes site: tar streams through pods/exec of its storage helper). Its ClusterPort says
// so by returning one from `copier()`; the server's TransferPort then copies through it.
class SiteCopier {
 public:
  virtual ~SiteCopier() = default;
  // request.from.path (on the site) into local_path (on this host), capped and reported
  // through `control`.
  virtual Result<TransferOutcome> copy_out(const TransferRequest& request,
                                           const std::string& local_path,
                                           TransferControl& control) = 0;
  // local_path (on this host) into request.to.path (on the site).
  virtual Result<TransferOutcome> copy_in(const TransferRequest& request,
                                          const std::string& local_path,
                                          TransferControl& control) = 0;
};

}  // namespace orch
