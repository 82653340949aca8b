#pragma once
// The client commands of checkpoints and data (issue 5): `checkpoint ls` and `data ls|add|
// replicate|transfers|audit`. Like client_commands.h, each is a run_* function that writes to
// the given streams and returns the exit code.

#include <cstdint>
#include <ostream>
#include <string>

#include "cli/client_commands.h"

namespace orch {

// A job's checkpoints newest first, with their size, files, copies and age.
int run_checkpoint_ls(const ClientOptions& o, std::int64_t job_id, std::ostream& out,
                      std::ostream& err);

// Every dataset with its size and copies.
int run_data_ls(const ClientOptions& o, std::ostream& out, std::ostream& err);
// Registers a dataset whose first copy is at cluster:path.
int run_data_add(const ClientOptions& o, const std::string& name, const std::string& cluster,
                 const std::string& path, std::ostream& out, std::ostream& err);
// Copies a dataset (dataset not empty) or a job's newest verified checkpoint (job_id > 0) to a
// cluster.
int run_data_replicate(const ClientOptions& o, const std::string& dataset, std::int64_t job_id,
                       const std::string& to, std::ostream& out, std::ostream& err);

struct TransfersOptions {
  bool all = false;    // done and cancelled ones too (default: active and failed ones)
  int limit = 0;       // transfers per page (0: the server's default)
  std::string cursor;  // the page after the one that printed it
  bool watch = false;  // redraw every interval_ms until none is active
  int interval_ms = 1000;
  int max_rounds = 0;     // watch: stop after this many tables (0: until none is active)
  bool terminal = false;  // out is a terminal: clear the screen before each table (ANSI)
};
// A page of transfers, a table per group (purpose and job), or JSON; when more follow, the
// command for the next page on err. With watch, the page again every interval until no transfer
// is active: on a terminal the screen is cleared between tables, otherwise they follow each
// other separated by a blank line; -o json prints one JSON document per line.
int run_data_transfers(const ClientOptions& o, const TransfersOptions& t, std::ostream& out,
                       std::ostream& err);
// Checks every copy at cluster (empty: at every cluster) now.
int run_data_audit(const ClientOptions& o, const std::string& cluster, std::ostream& out,
                   std::ostream& err);

}  // namespace orch
