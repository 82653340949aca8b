#pragma once
// Records an attempt's agents push home over HTTPS (issue 44, docs/launch-contract.md): where a
// site cannot be read by polling files (Kubernetes), each task's `orchestrate-agent run` POSTs
// its event records (start, heartbeat, progress, checkpoint, exit, fault, io_stall) to
// `POST /api/v1/attempts/{token}/records` with a credential scoped to that one attempt. The
// server stores them (the state database, so a restart loses none) and a site reads each task's
// newest record through PushedRecordSource to judge the gang (scheduler/model/gang_verdict.h).
// A seam like cluster_port.h: implemented by the server, read by the adapters. No I/O here.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/model/site_types.h"
#include "scheduler/model/task_fault.h"

namespace orch {

// One task's newest pushed record, as the server holds it.
struct PushedTask {
  int rank = 0;
  std::string node;               // the node the agent named; "" when it did not
  std::int64_t last_seq = 0;      // the highest record number stored for the task
  std::int64_t received_ms = 0;   // the server's clock when the batch holding it arrived
  std::string event;              // the newest record's event ("heartbeat", "exit", ...)
  std::int64_t at_ms = 0;         // the newest record's at_ms (the agent's clock)
  std::optional<int> exit_code;   // from an exit record
  std::optional<int> signal;      // from an exit record
  std::optional<TaskFault> fault;  // task_fault_of(the newest record)
  std::optional<TaskAlert> stall;  // task_alert_of(the newest record): an io_stall while it lasts
  std::optional<std::int64_t> checkpoint_step;  // the newest checkpoint record's step, if any
};

class PushedRecordSource {
 public:
  virtual ~PushedRecordSource() = default;
  // Every task that pushed for the attempt with this launch token, by rank; empty when none.
  virtual std::vector<PushedTask> tasks(const std::string& token) = 0;
  // When this server process began to accept pushes (its clock). A site judges no silence
  // before serving_since_ms() + the attempt's heartbeat timeout: agents that pushed into a
  // restarting server back off and come back, and their gap is the server's, not a node's.
  virtual std::int64_t serving_since_ms() const = 0;
  // The server's clock, the one received_ms is read on.
  virtual std::int64_t now_ms() const = 0;
};

// What a site needs so that its agents push home (server/server.cpp makes it; SiteContext
// carries it). Absent (SiteContext::push_home null) when the server serves no HTTPS.
struct PushHome {
  // The attempt's credential (derived from its launch token, useless for anything else).
  std::function<std::string(const std::string& token)> credential;
  // PEM the agents verify the server's certificate with (the server's own chain by default,
  // a leaf accepted as trust anchor); "" = the system's trust store.
  std::string ca_pem;
  PushedRecordSource* records = nullptr;
};

}  // namespace orch
