#pragma once
// The CLI's client side: commands that talk to `orchestrate serve` over the REST API.
// Each command's work is a run_* function that writes to the given streams and returns the
// process exit code, so tests run them in-process; add_client_commands only wires CLI11.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/spec_overrides.h"

namespace orch {

// Exit codes shared by every client command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitServerError = 1;  // the server answered with an error
inline constexpr int kExitUsage = 2;        // bad flags, arguments, URL or input file
inline constexpr int kExitUnreachable = 3;  // no answer from the server

struct ClientOptions {
  std::string server = "http://127.0.0.1:8080";
  std::string output = "table";  // table | wide (job list's extra columns) | json
  int timeout_ms = 10000;
  int poll_ms = 1000;  // job logs --follow
  // The API token; empty: found by call() (client_token.h).
  std::string token;
  // https: the CA bundle the server's certificate must be signed by; empty: the system store.
  std::string ca_file;
  // --state: the server's state directory, whose admin.token the call may read (client_token.h).
  std::string state_dir;
};

// $ORCH_URL when set and not empty, else the server_url `orchestrate serve` recorded in the
// user's config (cli/user_config.h), else http://127.0.0.1:8080.
std::string default_server_url();
// $ORCH_CA, or "".
std::string default_ca_file();
// The ca_file the user's config records for `server` (when its server_url is that one), or "":
// the CA of a server found through the config, when neither --ca nor $ORCH_CA names one.
std::string recorded_ca_file(const std::string& server);

int run_cluster_list(const ClientOptions& o, std::ostream& out, std::ostream& err);
// The cluster's nodes and recent node events; event_limit 0 leaves the server's default (50).
int run_cluster_nodes(const ClientOptions& o, const std::string& name, int event_limit,
                      std::ostream& out, std::ostream& err);
int run_cluster_outage(const ClientOptions& o, const std::string& name, bool down,
                       std::ostream& out, std::ostream& err);
// What `job submit` adds to the file: -e and --set (cli/spec_overrides.h), and --queue-anyway
// (keep a job no configured cluster could ever hold, for a cluster still to come).
struct SubmitExtras {
  SpecOverrides overrides;
  bool queue_anyway = false;
};
// A spec with `workdir:` has its tree packed and uploaded first (cli/workdir_upload.h), refused
// over workdir_limit bytes of files.
int run_job_submit(const ClientOptions& o, const std::string& file, std::ostream& out,
                   std::ostream& err, std::uint64_t workdir_limit = 256ULL << 20,
                   const SubmitExtras& extras = {});
// One page of jobs, newest first (limit 0: the server's default of 100), starting at cursor
// (the "next" of a previous page; empty: the newest). When more follow, the table says how to
// ask for them.
struct JobListQuery {
  std::string state;
  std::string cluster;
  std::string owner;
  std::string team;
  std::string group;
  int limit = 0;
  std::string cursor;
};
int run_job_list(const ClientOptions& o, const JobListQuery& q, std::ostream& out,
                 std::ostream& err);
int run_job_show(const ClientOptions& o, std::int64_t id, std::ostream& out, std::ostream& err);
// `orchestrate plan JOB` (issue 19): the checkpoint interval for the job's measured save time
// and its cluster's measured MTBF, and the ETTR expected at intervals around it.
int run_plan(const ClientOptions& o, std::int64_t id, std::ostream& out, std::ostream& err);
// Prints the log from offset 0, protocol lines hidden. With follow, polls every poll_ms until the
// job is terminal; without a pinned attempt it follows the latest one and each after it,
// announced on err. Defined in job_logs.cpp, which has the flags' version (--rank, --node, --raw).
int run_job_logs(const ClientOptions& o, std::int64_t id, std::optional<int> attempt, bool follow,
                 std::ostream& out, std::ostream& err);
int run_job_explain(const ClientOptions& o, std::int64_t id, std::ostream& out, std::ostream& err);
int run_job_cancel(const ClientOptions& o, std::int64_t id, std::ostream& out, std::ostream& err);
// `job cancel ID [ID...]` and `job cancel --group G` (every job of the group not ended yet, found
// page by page through GET /api/v1/jobs?group=G): one line per job; goes on past a job the
// server refuses, and exits with the last failure's code (a group with no job: 1).
int run_job_cancel_many(const ClientOptions& o, const std::vector<std::int64_t>& ids,
                        const std::string& group, std::ostream& out, std::ostream& err);

// Adds `cluster ...`, `job ...` and the global --server and -o/--output options to app.

}  // namespace orch
