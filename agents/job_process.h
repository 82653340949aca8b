#pragma once
// The job's processes as the agent sees them: the stop signals it catches and forwards to the
// job's whole process group, the child it forks and execs, and the descendants it reaps (the
// agent is a child subreaper, so orphans of the job become its children). The signal handlers
// only note what came and wake the agent's poll() loop through a self-pipe.

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "agents/job_user.h"

namespace orch::agent {

// Installs the handlers for the forwarded signals and SIGCHLD, with those signals blocked until
// unblock_job_signals(), so none is lost or handled before there is a child to forward it to.
// Returns the read end of the self-pipe (readable when a signal came), or -1 with *error.
int install_job_signals(std::string* error);
void unblock_job_signals();
// Empties the self-pipe after poll() said it is readable.
void drain_wake_pipe(int wake_fd);
// The forwarded signal that came since the last call, or 0.
int take_pending_signal();

// Sends sig to every process in our process group but us.
void forward_to_group(int sig);

// Our live children, from /proc.
std::vector<pid_t> live_children();

// Reaps whatever has exited; true while any descendant is still alive.
bool reap_and_check(pid_t main_child, int* main_status, bool* main_done);

// In the forked child: the default signal dispositions and mask a fresh program expects,
// stdout_fd as stdout (and stderr_fd as stderr unless it is -1: then the agent's is inherited),
// the job's user when there is one (become_job_user), then execvp(argv).
// Exits 127, saying why on stderr, when the user cannot be taken on or the command cannot be
// run: never runs the command as the agent's own user when `user` is set.
[[noreturn]] void exec_child(char* const* argv, int stdout_fd, const JobUser* user,
                             int stderr_fd = -1);

}  // namespace orch::agent
