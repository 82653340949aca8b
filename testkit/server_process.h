#pragma once
// Pieces for end-to-end tests that run the real `orchestrate serve` binary as a child process
// and talk to it over REST: a temporary directory, a child-process runner, the server process
// itself, a small REST helper and probes of the local sites' run directories (so a test can
// check that a job's processes live or died, and kill what a failed test left behind).

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "web/http/http_types.h"

namespace orch::e2e {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// A fresh directory under /tmp (mkdtemp), removed with everything in it on destruction. As root,
// the jobs' user may search it (testkit/job_user.h: a state directory in it must be reachable).
class TempDir {
 public:
  TempDir();  // throws std::runtime_error when mkdtemp fails
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void write_file(const std::string& path, const std::string& text);
std::string read_file(const std::string& path);  // "" when unreadable

struct ProcessResult {
  int exit_code = -1;  // -1 when it died of a signal or was killed at the deadline
  int signal = 0;
  bool timed_out = false;
  std::string output;  // stdout and stderr, interleaved as written
};

// Runs argv (argv[0] is a path) to completion and captures its output. A child still running
// at the deadline is SIGKILLed and reported as timed_out.
ProcessResult run_process(const std::vector<std::string>& argv, milliseconds timeout);

// `orchestrate serve --config C --state S --port 0` as a child process. Its stdout comes
// through a pipe (that is where it announces its URL); its stderr goes to log_path.
class ServerProcess {
 public:
  // Starts the server and reads its stdout until the "serving ... on http://..." line.
  // Returns nullptr and sets error (with the server's stderr) when that line does not come.
  // record_url: let it record its URL in the user's CLI config (cli/user_config.h); by default
  // it runs with --no-record, so tests and benchmarks never touch ~/.config. port: --port (0:
  // a free one; a fixed one for a server restarted where its clients, such as pods' agents
  // pushing home, were told to find it).
  static std::unique_ptr<ServerProcess> start(const std::string& config, const std::string& state,
                                              const std::string& log_path, std::string& error,
                                              milliseconds timeout = milliseconds(20000),
                                              bool record_url = false, int port = 0);
  ~ServerProcess();  // SIGKILLs a server still running, so a failed test leaks nothing
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  const std::string& url() const { return url_; }
  // The admin token the server left in its state directory ("" when there was none).
  const std::string& admin_token() const { return admin_token_; }
  pid_t pid() const { return pid_; }
  bool alive();  // false once it exited (it is reaped then)
  // SIGTERM, then SIGKILL if it has not exited by the deadline. Returns its exit code, or
  // 128 + signal when a signal ended it.
  int stop(milliseconds timeout = milliseconds(10000));
  void kill9();  // a crash: SIGKILL and reap, no chance to clean up

 private:
  ServerProcess(pid_t pid, int out_fd) : pid_(pid), out_fd_(out_fd) {}
  bool wait_exit(milliseconds timeout);
  pid_t pid_;
  int out_fd_;
  std::string url_;
  std::string admin_token_;
  std::optional<int> status_;
};

// REST helpers. A transport failure reads as status 0 with the error message as the body.
// call() sends the token remembered for url (ServerProcess::start remembers each server's admin
// token); call_as() the one given ("" for none). Both trust the CA remembered for an https url.
void remember_token(const std::string& url, const std::string& token);
void remember_ca(const std::string& url, const std::string& ca_file);
std::string token_for(const std::string& url);
HttpResponse call_as(const std::string& url, const std::string& token, const std::string& method,
                     const std::string& target, const std::string& body = "",
                     const std::string& content_type = "application/json");
HttpResponse call(const std::string& url, const std::string& method, const std::string& target,
                  const std::string& body = "",
                  const std::string& content_type = "application/json");
// The parsed JSON body of a GET, or null when the call failed or the body is not JSON.
nlohmann::json get_json(const std::string& url, const std::string& target);
// Job, attempts and events of one job, for failure messages.
std::string describe_job(const std::string& url, std::int64_t id);

// A local site's run directory: <state>/sites/<site>/runs/<token>.
struct RunDir {
  std::string site;
  std::string token;
  std::string path;
};
std::vector<RunDir> list_run_dirs(const std::string& state_dir);
// Each run dir's files, agent.pid, lock state and events.jsonl, for failure messages.
std::string describe_run_dirs(const std::string& state_dir);
// The agent pid in a run directory (task 0), or in a gang task's directory (tasks/<rank>).
std::optional<pid_t> read_agent_pid(const std::string& run_dir);
// Whether some process holds the run's agent.lock, i.e. whether its agent lives.
bool agent_lock_held(const std::string& run_dir);
// Whether any process (zombies excluded) is in process group pgid.
bool group_alive(pid_t pgid);
// "PID (ppid P) CMDLINE; ..." for each live process in group pgid, or "" when none.
std::string group_members(pid_t pgid);
// SIGKILLs the process group of every task of every run under state_dir still alive.
void kill_leftover_jobs(const std::string& state_dir);

}  // namespace orch::e2e
