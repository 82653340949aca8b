// SshSession::exec: one command on an exec channel, with a deadline.
//
// exec reads stdout and stderr without blocking while it writes stdin in pieces no larger than
// the remote window, so neither side can wait on the other with full buffers. The loop sleeps
// in poll() on the socket. ssh_channel_poll stops processing packets once the remote sent EOF,
// so the exit status is then awaited with ssh_channel_get_exit_status under a timeout set to
// the time left. exit-signal is only visible through channel callbacks.
#include <libssh/callbacks.h>
#include <poll.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "adapters/ssh/ssh_session_impl.h"

namespace orch {
namespace {

std::string abbreviate(const std::string& command) {
  constexpr std::size_t kMax = 60;
  std::string s = command.size() <= kMax ? command : command.substr(0, kMax) + "...";
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

struct ExitInfo {
  bool status_seen = false;
  int status = -1;
  std::string signal;
  bool core = false;
};

void on_exit_status(ssh_session /*session*/, ssh_channel /*channel*/, int status, void* user) {
  auto* info = static_cast<ExitInfo*>(user);
  info->status_seen = true;
  info->status = status;
}

void on_exit_signal(ssh_session /*session*/, ssh_channel /*channel*/, const char* signal, int core,
                    const char* /*errmsg*/, const char* /*lang*/, void* user) {
  auto* info = static_cast<ExitInfo*>(user);
  info->signal = signal != nullptr ? signal : "?";
  info->core = core != 0;
}

}  // namespace

using ssh_detail::format_seconds;
using ssh_detail::kIoChunk;
using ssh_detail::remaining;
using ssh_detail::seconds_to_ms;
using ssh_detail::Watchdog;

Result<ExecResult> SshSession::Impl::exec_once(const std::string& command, milliseconds timeout,
                                               const std::string& input, OpState& state) {
  if (command.find('\0') != std::string::npos) {
    return make_error(ErrorKind::invalid, prefix() + "a command line cannot contain a NUL byte");
  }
  const auto deadline = Clock::now() + timeout;
  watchdog_.arm(ssh_get_fd(session_), deadline);
  struct Disarm {
    Watchdog& w;
    ~Disarm() { w.disarm(); }
  } disarm{watchdog_};
  // Blocking libssh calls wait at most this long for one answer; the watchdog ends them at
  // the deadline anyway.
  set_timeout(std::min(timeout, seconds_to_ms(spec_.connect_timeout_s)));

  auto fail = [&](const std::string& what) -> Error {
    state.broken = true;
    if (watchdog_.fired() || Clock::now() >= deadline) {
      return unreachable("`" + abbreviate(command) + "` timed out after " +
                         format_seconds(timeout) + " on " + endpoint() +
                         "; the channel was closed and the connection dropped");
    }
    return unreachable(what + " on " + endpoint() + ": " + ssh_error());
  };

  // Declared before the channel: libssh may still call them while the channel is closed.
  ExitInfo exit_info;
  ssh_channel_callbacks_struct callbacks{};
  callbacks.userdata = &exit_info;
  callbacks.channel_exit_status_function = on_exit_status;
  callbacks.channel_exit_signal_function = on_exit_signal;
  ssh_callbacks_init(&callbacks);

  ssh_channel channel = ssh_channel_new(session_);
  if (channel == nullptr) {
    state.retry = true;
    return fail("cannot create a channel");
  }
  struct ChannelGuard {
    ssh_channel c;
    ~ChannelGuard() {
      if (ssh_channel_is_open(c) != 0) ssh_channel_close(c);
      ssh_channel_free(c);
    }
  } channel_guard{channel};

  if (ssh_channel_open_session(channel) != SSH_OK) {
    // Nothing has run yet: typically a connection that died while idle.
    state.retry = !watchdog_.fired();
    return fail("cannot open a channel");
  }
  ssh_set_channel_callbacks(channel, &callbacks);

  if (ssh_channel_request_exec(channel, command.c_str()) != SSH_OK) {
    return fail("cannot start `" + abbreviate(command) + "`");
  }

  ExecResult result;
  std::size_t written = 0;
  bool eof_sent = false;
  std::vector<char> buf(kIoChunk);
  const int fd = ssh_get_fd(session_);
  while (true) {
    bool progressed = false;
    // stdin: only what the remote window takes now, so that this never blocks while the
    // remote command waits for us to read its output.
    if (written < input.size() && ssh_channel_is_eof(channel) == 0 &&
        ssh_channel_is_closed(channel) == 0) {
      const std::size_t can = std::min<std::size_t>(
          {input.size() - written, ssh_channel_window_size(channel), kIoChunk});
      if (can > 0) {
        const int n =
            ssh_channel_write(channel, input.data() + written, static_cast<uint32_t>(can));
        if (n == SSH_ERROR) {
          if (ssh_channel_is_closed(channel) == 0 && !connection_dead()) {
            return fail("cannot write the input of `" + abbreviate(command) + "`");
          }
          written = input.size();  // the command is gone; its output tells the rest
        } else {
          written += static_cast<std::size_t>(n);
          progressed = true;
        }
      }
    }
    if (written >= input.size() && !eof_sent) {
      if (ssh_channel_is_closed(channel) == 0) ssh_channel_send_eof(channel);
      eof_sent = true;
    }
    // stdout and stderr, whatever has arrived.
    for (int is_stderr = 0; is_stderr <= 1; ++is_stderr) {
      std::string& sink = is_stderr != 0 ? result.err : result.out;
      while (true) {
        const int n = ssh_channel_read_nonblocking(channel, buf.data(),
                                                   static_cast<uint32_t>(buf.size()), is_stderr);
        if (n > 0) {
          sink.append(buf.data(), static_cast<std::size_t>(n));
          progressed = true;
          continue;
        }
        if (n == SSH_ERROR)
          return fail("lost the connection while `" + abbreviate(command) + "` ran");
        break;  // 0: nothing now; SSH_EOF: this stream is done
      }
    }
    if (ssh_channel_is_eof(channel) != 0 || ssh_channel_is_closed(channel) != 0) {
      if (written < input.size()) {
        // The remote sent EOF yet still reads stdin (e.g. `exec >&-; cat >file`). It can no
        // longer send data, so blocking writes cannot deadlock.
        set_timeout(std::max(remaining(deadline), milliseconds(1)));
        const int n = ssh_channel_write(channel, input.data() + written,
                                        static_cast<uint32_t>(input.size() - written));
        written = input.size();
        if (n == SSH_ERROR && watchdog_.fired()) return fail("");
        continue;  // sends EOF, then leaves through here again
      }
      break;
    }
    if (Clock::now() >= deadline) return fail("");
    // Reading may have processed a window adjust: then write before waiting.
    if (written < input.size() && ssh_channel_window_size(channel) > 0) progressed = true;
    if (!progressed) {
      pollfd p{fd, POLLIN, 0};
      const auto wait = std::min<long long>(remaining(deadline).count(), 100);
      ::poll(&p, 1, static_cast<int>(std::max<long long>(wait, 1)));
    }
  }
  // EOF came; the exit status (or signal) follows, then the close. libssh waits for it up to
  // its timeout option: make that the time left.
  if (!exit_info.status_seen && exit_info.signal.empty() && ssh_channel_is_closed(channel) == 0) {
    const auto left = remaining(deadline);
    if (left.count() == 0) return fail("");
    set_timeout(left);
    const int status = ssh_channel_get_exit_status(channel);
    if (status == SSH_ERROR && ssh_channel_is_closed(channel) == 0) {
      return fail("lost the connection while waiting for the exit status of `" +
                  abbreviate(command) + "`");
    }
    if (!exit_info.status_seen && exit_info.signal.empty() && ssh_channel_is_closed(channel) == 0) {
      return fail("");  // the time ran out
    }
  }
  if (exit_info.status_seen) {
    result.exit_status = exit_info.status;
  } else if (!exit_info.signal.empty()) {
    if (!result.err.empty() && result.err.back() != '\n') result.err += '\n';
    result.err += "orchestrate: remote command killed by signal " + exit_info.signal +
                  (exit_info.core ? " (core dumped)" : "") + "\n";
  }
  set_timeout(seconds_to_ms(spec_.connect_timeout_s));
  return result;
}

}  // namespace orch
