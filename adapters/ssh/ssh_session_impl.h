#pragma once
// The private half of SshSession (ssh_session.h): the Impl struct and the helpers its files
// share. Each file defines one part of Impl:
//
//   ssh_session.cpp   the public calls, the connection's life (drop, timeouts)
//   ssh_connect.cpp   connecting, key authentication, back-off after failed connects
//   ssh_host_key.cpp  host-key verification (pinned fingerprint, known_hosts, trust on first use)
//   ssh_exec.cpp      exec with a deadline
//   ssh_sftp.cpp      SFTP upload and ranged read
//
// Deadlines. Connect and authentication are bounded by libssh's own timeout option (set to
// connect_timeout_s). Everything after that runs under a Watchdog (ssh_watchdog.h): a thread
// that shuts the socket down when the call's deadline passes, so a libssh call blocked on a
// silent network returns with an error. exec also polls with its own deadline, so it normally
// ends before the watchdog fires.
//
// This header includes libssh: only the .cpp files of orch_ssh may include it.
#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "adapters/ssh/ssh_session.h"
#include "adapters/ssh/ssh_watchdog.h"
#include "scheduler/common/text.h"

namespace orch {
namespace ssh_detail {

using std::chrono::milliseconds;

inline constexpr std::size_t kIoChunk = std::size_t{64} * 1024;

inline milliseconds seconds_to_ms(double s) {
  return milliseconds(std::max<long long>(1, std::llround(s * 1000.0)));
}

inline std::string format_seconds(milliseconds ms) {
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), "%.1f s", static_cast<double>(ms.count()) / 1000.0);
  return buf.data();
}

inline milliseconds remaining(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  return std::max(left, milliseconds(0));
}

// What an operation tells the retry loop when it fails.
struct OpState {
  bool broken = false;  // the connection is unusable: drop it
  bool retry = false;   // nothing was done remotely: worth one more try on a fresh connection
};

}  // namespace ssh_detail

struct SshSession::Impl {
  using Clock = ssh_detail::Clock;
  using OpState = ssh_detail::OpState;
  using milliseconds = std::chrono::milliseconds;

  Impl(const std::string& site, const SshSpec& spec) : site_(site), spec_(spec) {}
  ~Impl() { drop(); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  const std::string& site_;
  const SshSpec& spec_;

  ssh_session session_ = nullptr;
  sftp_session sftp_ = nullptr;
  ssh_detail::Watchdog watchdog_;
  std::string fingerprint_;  // of the last successful connect
  std::string tofu_pin_;     // a key trusted on first use: pinned for the life of the session
  std::uint64_t connect_attempts_ = 0;
  // Back-off after failed connects.
  milliseconds backoff_{0};
  Clock::time_point retry_at_;
  std::optional<Error> last_connect_error_;
  int failed_connects_ = 0;
  bool port_seen_closed_ = false;  // the last connect or a handshake since found no sshd
  std::mt19937_64 rng_{std::random_device{}()};

  std::string prefix() const { return "site " + site_ + ": "; }
  std::string endpoint() const { return spec_.host + ":" + std::to_string(spec_.port); }
  // How known_hosts names the host: "[host]:port" unless the port is 22.
  std::string known_hosts_name() const {
    return spec_.port == 22 ? spec_.host : "[" + spec_.host + "]:" + std::to_string(spec_.port);
  }
  Error unreachable(const std::string& what) const {
    return make_error(ErrorKind::unreachable, prefix() + what);
  }
  std::string ssh_error() const {
    return session_ != nullptr ? ssh_get_error(session_) : std::string("no session");
  }
  bool connection_dead() const {
    if (session_ == nullptr || ssh_is_connected(session_) == 0) return true;
    return (ssh_get_status(session_) & (SSH_CLOSED | SSH_CLOSED_ERROR)) != 0;
  }

  // ---- the connection's life (ssh_session.cpp) -----------------------------------------------

  // libssh's timeout option: how long one blocking libssh call waits for an answer.
  void set_timeout(milliseconds ms);
  void drop();
  void clear_backoff();

  // ---- connecting (ssh_connect.cpp) ----------------------------------------------------------

  // Connects unless connected; during the back-off after a failed connect, fails at once.
  Result<void> ensure_connected();
  Result<ssh_key> load_key() const;
  Result<void> connect();

  // ---- host keys (ssh_host_key.cpp) ----------------------------------------------------------

  // The entries of the known_hosts file for this host: "line N records SHA256:... (type)".
  std::vector<std::string> recorded_entries(const std::string& file) const;
  // Called by connect() right after ssh_connect; sets fingerprint_ (and tofu_pin_).
  Result<void> check_host_key();

  // ---- the retry loop ------------------------------------------------------------------------

  template <typename T, typename Op>
  Result<T> run(Op op) {
    for (int attempt = 0;; ++attempt) {
      if (auto connected = ensure_connected(); !connected.ok()) return connected.error();
      OpState state;
      Result<T> result = op(state);
      if (result.ok()) return result;
      if (state.broken || connection_dead()) drop();
      if (!(state.retry && attempt == 0)) return result;
    }
  }

  // ---- exec (ssh_exec.cpp) -------------------------------------------------------------------

  Result<ExecResult> exec_once(const std::string& command, milliseconds timeout,
                               const std::string& input, OpState& state);

  // ---- SFTP (ssh_sftp.cpp) -------------------------------------------------------------------

  // An SFTP failure: unreachable (and retried once) when the connection went, else by status.
  Error sftp_failure(const std::string& what, const std::string& path, OpState& state);
  Result<void> ensure_sftp(OpState& state);
  Result<void> upload_once(const std::string& path, const std::string& content, int mode,
                           OpState& state);
  Result<std::string> read_once(const std::string& path, std::uint64_t offset,
                                std::size_t max_bytes, OpState& state);
};

}  // namespace orch
