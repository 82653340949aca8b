#pragma once
// SshSession: one authenticated libssh connection to a site's login node, shared by everything
// that drives that site (the Slurm adapter today, rsync relays later). It is what a team does
// by hand with `ssh login-node`, made safe to leave running:
//
//   - key authentication only (a key file, with an optional passphrase read from the
//     environment variable the cluster spec names); no passwords, no agent;
//   - strict host-key checking: the server's key must match the pinned SHA256 fingerprint or an
//     entry of the known_hosts file. An unknown key is accepted only with trust_on_first_use
//     (and then pinned for the life of the session, and appended to known_hosts when one is
//     given). A key that differs from the pinned or recorded one is always refused, with a
//     message naming the site and both fingerprints;
//   - one connection reused for every call; a call that finds it dead reconnects once. Failed
//     connects back off exponentially (0.5 s doubling to 30 s): during the back-off every call
//     fails at once with the last error instead of hammering a dead host;
//   - every call has a deadline; nothing blocks forever on a silent network.
//
// Errors: ErrorKind::unreachable when the site cannot be reached or authenticated (connect
// refused, timeout, host-key mismatch, auth refused, connection dropped): the caller treats the
// site as silent, never the job as failed. ErrorKind::not_found for a remote file that does not
// exist, ErrorKind::io for other SFTP failures, ErrorKind::misconfigured for the server's own
// mistakes (a key file that cannot be read). Messages start with "site <name>: ".
//
// Thread-safe: calls are serialised on one mutex (libssh sessions are not thread-safe).

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "scheduler/common/result.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {

struct ExecResult {
  // The remote command's exit status; -1 if it reported none. A command killed by a signal
  // reports none: exit_status is -1 and `err` ends with a line
  // "orchestrate: remote command killed by signal <NAME>[ (core dumped)]".
  int exit_status = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

class SshSession {
 public:
  SshSession(std::string site, SshSpec spec);
  ~SshSession();
  SshSession(const SshSession&) = delete;
  SshSession& operator=(const SshSession&) = delete;

  // Runs `command` with the remote user's shell (as `ssh host command` does), writing `input`
  // to its stdin and then closing it. A non-zero exit status is not an error: callers read it.
  // Past `timeout` the channel is closed and the call fails with ErrorKind::unreachable.
  // (`timeout` covers opening the channel through the exit status; connecting, when needed,
  // is bounded by connect_timeout_s on top of it.) A connection found dead when the channel
  // is opened is replaced and the call retried once; one that drops after the command was
  // sent is not retried (the command may have run): the call fails with unreachable. A command
  // containing a NUL byte is refused with ErrorKind::invalid.
  Result<ExecResult> exec(const std::string& command, std::chrono::milliseconds timeout,
                          const std::string& input = {});
  // exec with the spec's command_timeout_s.
  Result<ExecResult> exec(const std::string& command);

  // Writes `content` to `remote_path` by SFTP, atomically: a temporary file in the same
  // directory, then a rename. The directory must exist (ErrorKind::not_found if it does not).
  // SFTP v3 (OpenSSH) cannot rename over an existing file, and libssh 0.10 does not speak
  // posix-rename@openssh.com: an existing target is replaced by `mv -f` over an exec channel,
  // which is rename(2), so readers see the old or the new content, never neither.
  // Both SFTP calls are bounded by command_timeout_s.
  Result<void> upload(const std::string& remote_path, const std::string& content, int mode = 0644);
  // Up to max_bytes of a remote file from `offset` by SFTP; fewer at the end of the file, empty
  // past it. ErrorKind::not_found when the file does not exist.
  Result<std::string> read_file(const std::string& remote_path, std::uint64_t offset,
                                std::size_t max_bytes);

  // Drops the connection; the next call connects again (without waiting for the back-off).
  void disconnect();

  // The server's key fingerprint ("SHA256:...") as of the last successful connect; empty before.
  std::string server_fingerprint() const;
  const std::string& site() const { return site_; }
  // How many times this session has tried to connect (for tests and diagnostics: a call that
  // reused the connection, or failed at once during the back-off, does not count).
  std::uint64_t connect_attempts() const;

 private:
  struct Impl;
  std::string site_;
  SshSpec spec_;
  mutable std::mutex mu_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace orch
