#pragma once
// The exact command lines of a transfer, for each route: the OpenSSH client's options, rsync's
// flags, and the shell command run on a destination's login node when it pulls. Pure: nothing
// here runs anything, so every line is tested as text (tests/unit/transfer).
//
// Quoting: a value that reaches a remote shell goes through shell_quote() (adapters/ssh). The
// value of rsync's -e is not read by a shell but split by rsync itself, which knows single and
// double quotes and no backslashes ('' inside single quotes is one '); rsync_rsh_quote() writes
// that form. Paths of remote files travel inside rsync's protocol (-s, --secluded-args), never
// through the remote shell.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/result.h"

namespace orch::transfer {

// An sshd the OpenSSH client logs in to.
struct SshEndpoint {
  std::string host;
  int port = 22;
  std::string user;         // empty: the client's default
  std::string key_file;     // empty: the client's default identities
  std::string known_hosts;  // empty: the client's default files (still strict)
  bool accept_new = false;  // StrictHostKeyChecking=accept-new (trust on first use), else yes
  int connect_timeout_s = 10;
};

// One rsync invocation's settings.
struct RsyncSettings {
  bool directory = false;      // copy a directory's contents (src/ -> dst/), else one file
  bool checksum = false;       // --checksum
  double cap_bytes_per_s = 0;  // --bwlimit; 0: none
};

// --bwlimit's value for a cap: rsync counts in units of 1024 bytes/s; rounded up, at least 1.
// 0 for no cap (cap <= 0).
std::uint64_t bwlimit_kib(double cap_bytes_per_s);

// rsync's flags: -a --partial --info=progress2 --no-inc-recursive -s, then --checksum and
// --bwlimit=<KiB> when asked.
std::vector<std::string> rsync_flags(const RsyncSettings& settings);

// The OpenSSH client's options, every one explicit (no ~/.ssh/config):
// -F /dev/null -p PORT [-i KEY -o IdentitiesOnly=yes] -o BatchMode=yes
// -o StrictHostKeyChecking=yes|accept-new [-o UserKnownHostsFile=KH] -o ConnectTimeout=N
// -o ServerAliveInterval=15 -o ServerAliveCountMax=4. Errors: invalid for a host or user that
// could be read as an option or holds blanks, or a port out of range.
Result<std::vector<std::string>> ssh_options(const SshEndpoint& endpoint);

// argv that runs `remote_command` (a shell command line) on the endpoint:
// ssh <options> [-l USER] -- HOST COMMAND.
Result<std::vector<std::string>> ssh_command_argv(const SshEndpoint& endpoint,
                                                  const std::string& remote_command);

// A word as rsync's -e splitter reads it: 'value', with each ' doubled. Refuses a NUL byte.
Result<std::string> rsync_rsh_quote(std::string_view word);
// The value of rsync's -e: `ssh <options>`, every word quoted for rsync's splitter.
Result<std::string> rsync_remote_shell(const SshEndpoint& endpoint);

// "user@host:path" (an IPv6 address in brackets); the path is sent through rsync's protocol.
std::string remote_location(const SshEndpoint& endpoint, const std::string& path);
// A source as rsync takes it: a directory with one trailing '/' (its contents), a file as is.
std::string source_arg(const std::string& path, bool directory);
// The directory that must exist before rsync writes `path`: the directory itself, or a file's
// parent ("/" for a file at the root).
std::string directory_to_create(const std::string& path, bool directory);

// Local rsync between two local paths.
Result<std::vector<std::string>> local_copy_argv(const RsyncSettings& settings,
                                                 const std::string& from, const std::string& to);
// Local rsync pulling from a remote login node into a local path.
Result<std::vector<std::string>> pull_argv(const RsyncSettings& settings, const SshEndpoint& source,
                                           const std::string& from, const std::string& to);
// Local rsync pushing a local path to a remote login node; the remote side first makes the
// destination's directory (--rsync-path="mkdir -p DIR && rsync").
Result<std::vector<std::string>> push_argv(const RsyncSettings& settings, const std::string& from,
                                           const SshEndpoint& destination, const std::string& to);

// The shell command a destination's login node runs to pull from `peer` (its address, key and
// known_hosts as seen from that node):
//   echo $$ > PIDFILE && mkdir -p DIR && LC_ALL=C rsync FLAGS -e RSH USER@HOST:FROM TO;
//   rc=$?; rm -f PIDFILE; exit $rc
// sshd starts the command as a session leader, so $$ names the process group of the shell,
// rsync and the ssh it runs: remote_stop_command() stops all of them.
Result<std::string> remote_pull_command(const RsyncSettings& settings, const SshEndpoint& peer,
                                        const std::string& from, const std::string& to,
                                        const std::string& pid_file);
// The same for a copy between two paths of one login node (a transfer within one site):
//   echo $$ > PIDFILE && mkdir -p DIR && LC_ALL=C rsync FLAGS FROM TO; rc=$?; ...
Result<std::string> remote_local_copy_command(const RsyncSettings& settings,
                                              const std::string& from, const std::string& to,
                                              const std::string& pid_file);
// SIGTERM to the process group named in pid_file (rsync then keeps its partial file), and the
// pid file removed. Does nothing when the file is gone (the pull already ended).
Result<std::string> remote_stop_command(const std::string& pid_file);

// What an rsync exit code means (rsync(1), EXIT VALUES), e.g. 23 -> "partial transfer due to
// error"; ssh's 255 and a shell's 127 too.
std::string rsync_exit_meaning(int code);

}  // namespace orch::transfer
