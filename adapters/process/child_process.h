#pragma once
// A child process with its stdout and stderr on pipes, in a process group of its own, so that
// stopping it stops everything it started (rsync's own children and its ssh, a probe's
// helpers, a storage script's find and sha256sum). Reads never block for longer than asked.
// The one way orchestrate runs a program on this machine: run_captured.h runs one to its end.

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/result.h"

namespace orch::process {

// How a child ended: exit_code >= 0 when it exited, else the signal that ended it.
struct ChildExit {
  int exit_code = -1;
  int signal = 0;
};

class ChildProcess {
 public:
  // Starts argv (argv[0] is looked up in PATH unless it holds a '/') with stdin from /dev/null,
  // stdout and stderr on two pipes, no other descriptor of this process, every signal at its
  // default and `env` ("NAME=value") added to this process's environment. Errors: io when it
  // cannot be started (the message names the program and errno's text).
  static Result<ChildProcess> spawn(const std::vector<std::string>& argv,
                                    const std::vector<std::string>& env = {});
  // The same with stdin a pipe that write_stdin() feeds (tar -x of a stream).
  static Result<ChildProcess> spawn_with_stdin(const std::vector<std::string>& argv,
                                               const std::vector<std::string>& env = {});

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // Kills the group (SIGKILL) if the child still runs, and reaps it.
  ~ChildProcess();

  pid_t pid() const { return pid_; }

  // Waits up to `timeout` for output, then appends what stdout and stderr have to `out` and
  // `err`. Returns the number of bytes read (0 on timeout or when both pipes are closed; then
  // it waits up to `timeout` for the child to end instead).
  std::size_t read_some(std::chrono::milliseconds timeout, std::string& out, std::string& err);
  // Both pipes closed: the child (and whatever shared its pipes) is done writing.
  bool output_closed() const { return out_fd_ < 0 && err_fd_ < 0; }

  // Writes all of `data` to the child's stdin (spawn_with_stdin), blocking while the pipe is
  // full. false when the child closed its stdin or ended (never SIGPIPE: it is blocked and
  // swallowed on this thread), or there is no stdin pipe.
  bool write_stdin(std::string_view data);
  // Closes its stdin: end of input.
  void close_stdin();

  // Sends `sig` to the child's process group.
  void signal_group(int sig);
  // Whether it has ended (reaps it; never blocks).
  bool try_wait();
  // Reaps it, waiting up to `timeout`; false when it still runs then.
  bool wait_for(std::chrono::milliseconds timeout);
  // Valid once try_wait or wait_for returned true.
  const ChildExit& exit() const { return exit_; }

 private:
  ChildProcess() = default;
  void close_fds();

  pid_t pid_ = -1;
  static Result<ChildProcess> start(const std::vector<std::string>& argv,
                                    const std::vector<std::string>& env, bool stdin_pipe);
  int in_fd_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool reaped_ = false;
  ChildExit exit_;
};

// Stops a child politely: SIGTERM to its group, up to `grace` for it to end (its output is
// drained into out/err meanwhile), then SIGKILL. Always reaps it.
void terminate_child(ChildProcess& child, std::chrono::milliseconds grace, std::string& out,
                     std::string& err);

}  // namespace orch::process
