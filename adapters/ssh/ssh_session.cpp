// SshSession on libssh 0.10. See ssh_session.h for the contract; the notes here are about how
// libssh is driven to keep it.
//
// - Deadlines. Connect and authentication are bounded by libssh's own timeout option (set to
//   connect_timeout_s). Everything after that runs under a Watchdog: a thread that shuts the
//   socket down when the call's deadline passes, so a libssh call blocked on a silent network
//   (sftp_read loops on ssh_channel_read for as long as it returns 0) returns with an error.
//   exec also polls with its own deadline, so it normally ends before the watchdog fires.
// - exec reads stdout and stderr without blocking while it writes stdin in pieces no larger
//   than the remote window, so neither side can wait on the other with full buffers.
// - Host keys are checked by us after ssh_connect (libssh only negotiates), against the pinned
//   fingerprint, the spec's known_hosts file (never ~/.ssh/known_hosts or /etc/ssh), and the
//   key trusted on first use earlier in this session.
#include "adapters/ssh/ssh_session.h"

#include <fcntl.h>
#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "adapters/ssh/shell_quote.h"

namespace orch {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kFirstBackoff{500};
constexpr milliseconds kMaxBackoff{30000};
constexpr std::size_t kIoChunk = std::size_t{64} * 1024;

std::string expand_home(const std::string& path) {
  if (path.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    if (home != nullptr) return std::string(home) + path.substr(1);
  }
  return path;
}

milliseconds seconds_to_ms(double s) {
  return milliseconds(std::max<long long>(1, std::llround(s * 1000.0)));
}

std::string format_seconds(milliseconds ms) {
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), "%.1f s", static_cast<double>(ms.count()) / 1000.0);
  return buf.data();
}

milliseconds remaining(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  return std::max(left, milliseconds(0));
}

// "SHA256:<base64 without padding>", exactly as `ssh-keygen -lf` prints it.
std::string fingerprint_of(ssh_key key) {
  unsigned char* hash = nullptr;
  size_t len = 0;
  if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &len) != SSH_OK) return {};
  char* fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, len);
  ssh_clean_pubkey_hash(&hash);
  if (fp == nullptr) return {};
  std::string result(fp);
  ssh_string_free_char(fp);
  return result;
}

// A pinned fingerprint as users may paste it: surrounding blanks, "SHA256:" forgotten, '='
// padding from other tools.
std::string normalise_fingerprint(std::string fp) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!fp.empty() && blank(fp.back())) fp.pop_back();
  std::size_t start = 0;
  while (start < fp.size() && blank(fp[start])) ++start;
  fp.erase(0, start);
  while (!fp.empty() && fp.back() == '=') fp.pop_back();
  if (fp.rfind("SHA256:", 0) != 0) fp = "SHA256:" + fp;
  return fp;
}

std::string abbreviate(const std::string& command) {
  constexpr std::size_t kMax = 60;
  std::string s = command.size() <= kMax ? command : command.substr(0, kMax) + "...";
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

// Shuts a socket down when a deadline passes, so that a libssh call blocked on it returns.
class Watchdog {
 public:
  Watchdog() : thread_([this] { run(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(int fd, Clock::time_point deadline) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      fd_ = fd;
      deadline_ = deadline;
      armed_ = fd >= 0;
      fired_ = false;
    }
    cv_.notify_all();
  }
  // Returns whether it fired since arm().
  bool disarm() {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = false;
    fd_ = -1;
    return fired_;
  }
  bool fired() const {
    std::lock_guard<std::mutex> lock(mu_);
    return fired_;
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!quit_) {
      if (!armed_) {
        cv_.wait(lock);
        continue;
      }
      const auto deadline = deadline_;
      cv_.wait_until(lock, deadline);
      if (armed_ && !quit_ && deadline_ == deadline && Clock::now() >= deadline) {
        ::shutdown(fd_, SHUT_RDWR);
        fired_ = true;
        armed_ = false;
      }
    }
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  int fd_ = -1;
  Clock::time_point deadline_;
  bool armed_ = false;
  bool fired_ = false;
  bool quit_ = false;
  std::thread thread_;  // last: starts after the members it reads
};

// What an operation tells the retry loop when it fails.
struct OpState {
  bool broken = false;  // the connection is unusable: drop it
  bool retry = false;   // nothing was done remotely: worth one more try on a fresh connection
};

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

struct SshSession::Impl {
  Impl(const std::string& site, const SshSpec& spec) : site_(site), spec_(spec) {}
  ~Impl() { drop(); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  const std::string& site_;
  const SshSpec& spec_;

  ssh_session session_ = nullptr;
  sftp_session sftp_ = nullptr;
  Watchdog watchdog_;
  std::string fingerprint_;  // of the last successful connect
  std::string tofu_pin_;     // a key trusted on first use: pinned for the life of the session
  std::uint64_t connect_attempts_ = 0;
  // Back-off after failed connects.
  milliseconds backoff_{0};
  Clock::time_point retry_at_;
  std::optional<Error> last_connect_error_;
  int failed_connects_ = 0;
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

  void set_timeout(milliseconds ms) {
    // libssh reads timeout 0/0 as "forever": never let it get there.
    const long long total = std::max<long long>(1, ms.count());
    long sec = static_cast<long>(total / 1000);
    long usec = static_cast<long>((total % 1000) * 1000);
    ssh_options_set(session_, SSH_OPTIONS_TIMEOUT, &sec);
    ssh_options_set(session_, SSH_OPTIONS_TIMEOUT_USEC, &usec);
  }

  void drop() {
    watchdog_.disarm();
    if (sftp_ != nullptr) {
      sftp_free(sftp_);
      sftp_ = nullptr;
    }
    if (session_ != nullptr) {
      if (ssh_is_connected(session_) != 0) ssh_disconnect(session_);
      ssh_free(session_);
      session_ = nullptr;
    }
  }

  void clear_backoff() {
    backoff_ = milliseconds(0);
    last_connect_error_.reset();
    failed_connects_ = 0;
  }

  // ---- connecting ----------------------------------------------------------------------------

  Result<void> ensure_connected() {
    if (session_ != nullptr && !connection_dead()) return {};
    drop();
    if (last_connect_error_ && Clock::now() < retry_at_) {
      Error e = *last_connect_error_;
      e.message += "; not retrying for another " + format_seconds(remaining(retry_at_)) +
                   " (back-off after " + std::to_string(failed_connects_) + " failed connect" +
                   (failed_connects_ == 1 ? "" : "s") + ")";
      return e;
    }
    auto result = connect();
    if (result.ok()) {
      clear_backoff();
      return {};
    }
    drop();
    if (result.error().kind == ErrorKind::invalid) return result;  // local: no back-off
    backoff_ = backoff_.count() == 0 ? kFirstBackoff : std::min(backoff_ * 2, kMaxBackoff);
    retry_at_ = Clock::now() + backoff_;
    ++failed_connects_;
    last_connect_error_ = result.error();
    Error e = result.error();
    e.message += "; next attempt in " + format_seconds(backoff_) + " at the earliest";
    return e;
  }

  Result<ssh_key> load_key() const {
    if (spec_.key_file.empty()) {
      return make_error(ErrorKind::invalid, prefix() +
                                                "ssh.key_file is not set (key "
                                                "authentication is the only kind used)");
    }
    const std::string path = expand_home(spec_.key_file);
    if (::access(path.c_str(), R_OK) != 0) {
      return make_error(ErrorKind::invalid, prefix() + "cannot read ssh.key_file " + path + ": " +
                                                std::strerror(errno));
    }
    const char* passphrase = nullptr;
    if (!spec_.key_passphrase_env.empty()) {
      passphrase = std::getenv(spec_.key_passphrase_env.c_str());
      if (passphrase == nullptr) {
        return make_error(ErrorKind::invalid,
                          prefix() + "ssh.key_passphrase_env names " + spec_.key_passphrase_env +
                              ", but that environment variable is not set in the orchestrator's "
                              "environment (it holds the passphrase of " +
                              path + ")");
      }
    }
    ssh_key key = nullptr;
    if (ssh_pki_import_privkey_file(path.c_str(), passphrase, nullptr, nullptr, &key) != SSH_OK) {
      std::string why =
          passphrase != nullptr
              ? "wrong passphrase in $" + spec_.key_passphrase_env + ", or not a private key"
              : "not a private key, or encrypted: set ssh.key_passphrase_env to "
                "the environment variable holding its passphrase";
      return make_error(ErrorKind::invalid,
                        prefix() + "cannot load private key " + path + " (" + why + ")");
    }
    return key;
  }

  Result<void> connect() {
    auto key = load_key();
    if (!key.ok()) return key.error();
    struct KeyGuard {
      ssh_key k;
      ~KeyGuard() { ssh_key_free(k); }
    } key_guard{*key};

    ++connect_attempts_;
    session_ = ssh_new();
    if (session_ == nullptr) return unreachable("cannot create an SSH session (out of memory?)");
    int verbosity = SSH_LOG_NOLOG;
    int no = 0;
    int yes = 1;
    auto port = static_cast<unsigned int>(spec_.port);
    const std::string known_hosts =
        spec_.known_hosts.empty() ? std::string("/dev/null") : expand_home(spec_.known_hosts);
    ssh_options_set(session_, SSH_OPTIONS_LOG_VERBOSITY, &verbosity);
    ssh_options_set(session_, SSH_OPTIONS_PROCESS_CONFIG, &no);  // never ~/.ssh/config
    ssh_options_set(session_, SSH_OPTIONS_HOST, spec_.host.c_str());
    ssh_options_set(session_, SSH_OPTIONS_PORT, &port);
    if (!spec_.user.empty()) ssh_options_set(session_, SSH_OPTIONS_USER, spec_.user.c_str());
    ssh_options_set(session_, SSH_OPTIONS_KNOWNHOSTS, known_hosts.c_str());
    ssh_options_set(session_, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
    ssh_options_set(session_, SSH_OPTIONS_NODELAY, &yes);  // small requests: no Nagle delays
    set_timeout(seconds_to_ms(spec_.connect_timeout_s));

    if (ssh_connect(session_) != SSH_OK) {
      return unreachable("cannot connect to " + endpoint() + ": " + ssh_error());
    }
    if (auto checked = check_host_key(); !checked.ok()) return checked;

    const int auth = ssh_userauth_publickey(session_, nullptr, *key);
    if (auth != SSH_AUTH_SUCCESS) {
      const std::string user = spec_.user.empty() ? "the local user name" : spec_.user;
      std::string why = auth == SSH_AUTH_ERROR ? ssh_error()
                        : auth == SSH_AUTH_AGAIN
                            ? "no answer within the connect timeout"
                            : "the server refused the key (is its public key in the "
                              "authorized_keys of that user?)";
      return unreachable("authentication as " + user + " on " + endpoint() + " with key " +
                         expand_home(spec_.key_file) + " failed: " + why);
    }
    return {};
  }

  // The entries of the known_hosts file for this host: "line N records SHA256:... (type)".
  std::vector<std::string> recorded_entries(const std::string& file) const {
    std::vector<std::string> found;
    std::ifstream in(file);
    std::string line;
    const std::string host = known_hosts_name();
    for (int n = 1; std::getline(in, line); ++n) {
      const auto first = line.find_first_not_of(" \t");
      if (first == std::string::npos || line[first] == '#' || line[first] == '@') continue;
      struct ssh_knownhosts_entry* entry = nullptr;
      if (ssh_known_hosts_parse_line(host.c_str(), line.c_str() + first, &entry) == SSH_OK &&
          entry != nullptr) {
        found.push_back("line " + std::to_string(n) + " records " +
                        fingerprint_of(entry->publickey) + " (" +
                        ssh_key_type_to_char(ssh_key_type(entry->publickey)) + ")");
      }
      ssh_knownhosts_entry_free(entry);
    }
    return found;
  }

  Result<void> check_host_key() {
    ssh_key server_key = nullptr;
    if (ssh_get_server_publickey(session_, &server_key) != SSH_OK) {
      return unreachable("cannot read the host key of " + endpoint() + ": " + ssh_error());
    }
    const std::string fp = fingerprint_of(server_key);
    const std::string type = ssh_key_type_to_char(ssh_key_type(server_key));
    ssh_key_free(server_key);
    if (fp.empty()) return unreachable("cannot hash the host key of " + endpoint());
    const std::string offered = "server offered " + fp + " (" + type + ")";

    bool trusted = false;
    if (!spec_.host_key.empty()) {
      const std::string pinned = normalise_fingerprint(spec_.host_key);
      if (pinned != fp) {
        return unreachable("host key of " + endpoint() + " changed: expected " + pinned +
                           " (pinned in clusters.yaml as ssh.host_key), " + offered +
                           "; refusing to connect. If the change is legitimate, update "
                           "ssh.host_key");
      }
      trusted = true;
    }
    const std::string known_hosts = expand_home(spec_.known_hosts);
    if (!spec_.known_hosts.empty()) {
      switch (ssh_session_is_known_server(session_)) {
        case SSH_KNOWN_HOSTS_OK:
          trusted = true;
          break;
        case SSH_KNOWN_HOSTS_CHANGED:
        case SSH_KNOWN_HOSTS_OTHER: {
          std::string recorded;
          for (const auto& e : recorded_entries(known_hosts)) {
            recorded += (recorded.empty() ? "" : ", ") + e;
          }
          if (recorded.empty()) recorded = "a different key";
          return unreachable("host key of " + endpoint() + " changed: " + known_hosts + " " +
                             recorded + ", " + offered +
                             "; refusing to connect. If the change is legitimate, remove the "
                             "old entry (ssh-keygen -R '" +
                             known_hosts_name() + "' -f " + known_hosts +
                             ") and pin the new key in ssh.host_key or accept it once with "
                             "ssh.trust_on_first_use");
        }
        case SSH_KNOWN_HOSTS_UNKNOWN:
        case SSH_KNOWN_HOSTS_NOT_FOUND:
          break;
        case SSH_KNOWN_HOSTS_ERROR:
        default:
          return unreachable("cannot check the host key of " + endpoint() + " against " +
                             known_hosts + ": " + ssh_error());
      }
    }
    if (!tofu_pin_.empty() && tofu_pin_ != fp) {
      return unreachable("host key of " + endpoint() + " changed: this session trusted " +
                         tofu_pin_ + " on first use, " + offered +
                         "; refusing to connect. If the change is legitimate, pin the new key "
                         "in ssh.host_key and restart the orchestrator");
    }
    if (!trusted && tofu_pin_.empty()) {
      if (!spec_.trust_on_first_use) {
        const std::string where =
            spec_.known_hosts.empty()
                ? std::string("no ssh.host_key is pinned and no ssh.known_hosts is given")
                : "it matches neither ssh.host_key nor an entry for " + known_hosts_name() +
                      " in " + known_hosts;
        return unreachable("host key of " + endpoint() + " is unknown: " + offered + ", and " +
                           where +
                           "; refusing to connect. Check the fingerprint on the login node "
                           "(ssh-keygen -lf /etc/ssh/ssh_host_" +
                           (type.rfind("ssh-", 0) == 0 ? type.substr(4) : type) +
                           "_key.pub) and pin it in ssh.host_key, or set "
                           "ssh.trust_on_first_use");
      }
      if (!spec_.known_hosts.empty() && ssh_session_update_known_hosts(session_) != SSH_OK) {
        return make_error(ErrorKind::io, prefix() + "trusted the host key " + fp + " of " +
                                             endpoint() +
                                             " on first use, but cannot record it "
                                             "in " +
                                             known_hosts + ": " + ssh_error());
      }
      tofu_pin_ = fp;
    }
    fingerprint_ = fp;
    return {};
  }

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

  // ---- exec ----------------------------------------------------------------------------------

  Result<ExecResult> exec_once(const std::string& command, milliseconds timeout,
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
      if (!exit_info.status_seen && exit_info.signal.empty() &&
          ssh_channel_is_closed(channel) == 0) {
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

  // ---- SFTP ----------------------------------------------------------------------------------

  // An SFTP failure: unreachable (and retried once) when the connection went, else by status.
  Error sftp_failure(const std::string& what, const std::string& path, OpState& state) {
    if (watchdog_.fired()) {
      state.broken = true;
      return unreachable(what + " " + path + " on " + endpoint() + " timed out after " +
                         format_seconds(seconds_to_ms(spec_.command_timeout_s)) +
                         "; the connection was dropped");
    }
    if (sftp_ == nullptr || connection_dead()) {
      state.broken = true;
      state.retry = true;
      return unreachable(what + " " + path + " on " + endpoint() +
                         ": lost the connection: " + ssh_error());
    }
    const int code = sftp_get_error(sftp_);
    switch (code) {
      case SSH_FX_NO_SUCH_FILE:
      case SSH_FX_NO_SUCH_PATH:
        return make_error(ErrorKind::not_found,
                          prefix() + what + " " + path + ": no such file or directory");
      case SSH_FX_PERMISSION_DENIED:
        return make_error(ErrorKind::io, prefix() + what + " " + path + ": permission denied");
      case SSH_FX_EOF:
      case SSH_FX_BAD_MESSAGE:
      case SSH_FX_NO_CONNECTION:
      case SSH_FX_CONNECTION_LOST:
        // The SFTP channel (not the connection) broke: start over with a new one.
        state.broken = true;
        state.retry = true;
        return unreachable(what + " " + path + ": the SFTP channel failed: " + ssh_error());
      default:
        return make_error(ErrorKind::io, prefix() + what + " " + path + ": SFTP error " +
                                             std::to_string(code) + ": " + ssh_error());
    }
  }

  Result<void> ensure_sftp(OpState& state) {
    if (sftp_ != nullptr) return {};
    sftp_ = sftp_new(session_);
    if (sftp_ == nullptr) {
      state.broken = true;
      state.retry = !watchdog_.fired();
      return unreachable("cannot open an SFTP channel on " + endpoint() + ": " + ssh_error());
    }
    if (sftp_init(sftp_) != SSH_OK) {
      state.broken = true;
      state.retry = !watchdog_.fired();
      const int code = sftp_get_error(sftp_);
      sftp_free(sftp_);
      sftp_ = nullptr;
      return unreachable("cannot start SFTP on " + endpoint() + " (error " + std::to_string(code) +
                         "; is the sftp subsystem enabled?): " + ssh_error());
    }
    return {};
  }

  Result<void> upload_once(const std::string& path, const std::string& content, int mode,
                           OpState& state) {
    const auto deadline = Clock::now() + seconds_to_ms(spec_.command_timeout_s);
    watchdog_.arm(ssh_get_fd(session_), deadline);
    struct Disarm {
      Watchdog& w;
      ~Disarm() { w.disarm(); }
    } disarm{watchdog_};
    set_timeout(seconds_to_ms(spec_.connect_timeout_s));
    if (auto ok = ensure_sftp(state); !ok.ok()) return ok;

    std::array<char, 13> suffix{};
    std::snprintf(suffix.data(), suffix.size(), "%012llx",
                  static_cast<unsigned long long>(rng_() & 0xffffffffffffULL));
    const std::string tmp = path + ".tmp-" + suffix.data();
    const auto file_mode = static_cast<mode_t>(mode);

    sftp_file file = sftp_open(sftp_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, file_mode);
    if (file == nullptr) return sftp_failure("cannot create", tmp, state);
    auto remove_tmp = [&] {
      if (sftp_ != nullptr && !connection_dead()) sftp_unlink(sftp_, tmp.c_str());
    };
    std::size_t done = 0;
    while (done < content.size()) {
      const std::size_t n = std::min(kIoChunk, content.size() - done);
      const ssize_t w = sftp_write(file, content.data() + done, n);
      if (w <= 0) {
        Error e = sftp_failure("cannot write", tmp, state);
        sftp_close(file);
        remove_tmp();
        return e;
      }
      done += static_cast<std::size_t>(w);
    }
    if (sftp_extension_supported(sftp_, "fsync@openssh.com", "1") != 0 && sftp_fsync(file) != 0) {
      Error e = sftp_failure("cannot fsync", tmp, state);
      sftp_close(file);
      remove_tmp();
      return e;
    }
    if (sftp_close(file) != SSH_NO_ERROR) {
      Error e = sftp_failure("cannot close", tmp, state);
      remove_tmp();
      return e;
    }
    // The server's umask applied at creation: set the mode exactly.
    if (sftp_chmod(sftp_, tmp.c_str(), file_mode) != 0) {
      Error e = sftp_failure("cannot chmod", tmp, state);
      remove_tmp();
      return e;
    }
    if (sftp_rename(sftp_, tmp.c_str(), path.c_str()) == 0) return {};
    if (watchdog_.fired() || connection_dead()) return sftp_failure("cannot rename", tmp, state);
    // SFTP v3 refuses to rename over an existing file. If that is why, replace it with
    // rename(2) through `mv -f`, which is atomic.
    sftp_attributes target = sftp_lstat(sftp_, path.c_str());
    if (target == nullptr) {
      Error e = sftp_failure("cannot rename " + tmp + " to", path, state);
      remove_tmp();
      return e;
    }
    sftp_attributes_free(target);
    auto mv = shell_command({"mv", "-f", "--", tmp, path});
    if (!mv.ok()) {
      remove_tmp();
      return make_error(ErrorKind::invalid, prefix() + mv.error().message);
    }
    watchdog_.disarm();
    auto moved = exec_once(*mv, std::max(remaining(deadline), milliseconds(1)), {}, state);
    if (!moved.ok()) {
      state.retry = false;  // the rename may have happened; the caller may simply call again
      return moved.error();
    }
    if (moved->exit_status != 0) {
      remove_tmp();
      return make_error(ErrorKind::io,
                        prefix() + "cannot replace " + path + ": mv -f said: " + moved->err);
    }
    return {};
  }

  Result<std::string> read_once(const std::string& path, std::uint64_t offset,
                                std::size_t max_bytes, OpState& state) {
    watchdog_.arm(ssh_get_fd(session_), Clock::now() + seconds_to_ms(spec_.command_timeout_s));
    struct Disarm {
      Watchdog& w;
      ~Disarm() { w.disarm(); }
    } disarm{watchdog_};
    set_timeout(seconds_to_ms(spec_.connect_timeout_s));
    if (auto ok = ensure_sftp(state); !ok.ok()) return ok.error();

    sftp_file file = sftp_open(sftp_, path.c_str(), O_RDONLY, 0);
    if (file == nullptr) return sftp_failure("cannot open", path, state);
    struct FileGuard {
      sftp_file f;
      ~FileGuard() { sftp_close(f); }
    } file_guard{file};
    if (offset > 0 && sftp_seek64(file, offset) != 0) {
      return sftp_failure("cannot seek in", path, state);
    }
    std::string data;
    std::vector<char> buf(kIoChunk);
    while (data.size() < max_bytes) {
      const std::size_t want = std::min(buf.size(), max_bytes - data.size());
      const ssize_t n = sftp_read(file, buf.data(), want);
      if (n < 0) return sftp_failure("cannot read", path, state);
      if (n == 0) break;  // end of file
      data.append(buf.data(), static_cast<std::size_t>(n));
    }
    return data;
  }
};

SshSession::SshSession(std::string site, SshSpec spec)
    : site_(std::move(site)), spec_(std::move(spec)), impl_(std::make_unique<Impl>(site_, spec_)) {
  ssh_set_log_level(SSH_LOG_NOLOG);  // libssh logs to stderr by default
}

SshSession::~SshSession() {
  std::lock_guard<std::mutex> lock(mu_);
  impl_.reset();
}

Result<ExecResult> SshSession::exec(const std::string& command, std::chrono::milliseconds timeout,
                                    const std::string& input) {
  std::lock_guard<std::mutex> lock(mu_);
  return impl_->run<ExecResult>(
      [&](OpState& state) { return impl_->exec_once(command, timeout, input, state); });
}

Result<ExecResult> SshSession::exec(const std::string& command) {
  return exec(command, seconds_to_ms(spec_.command_timeout_s));
}

Result<void> SshSession::upload(const std::string& remote_path, const std::string& content,
                                int mode) {
  std::lock_guard<std::mutex> lock(mu_);
  return impl_->run<void>(
      [&](OpState& state) { return impl_->upload_once(remote_path, content, mode, state); });
}

Result<std::string> SshSession::read_file(const std::string& remote_path, std::uint64_t offset,
                                          std::size_t max_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  return impl_->run<std::string>(
      [&](OpState& state) { return impl_->read_once(remote_path, offset, max_bytes, state); });
}

void SshSession::disconnect() {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->drop();
  impl_->clear_backoff();
}

std::string SshSession::server_fingerprint() const {
  std::lock_guard<std::mutex> lock(mu_);
  return impl_->fingerprint_;
}

std::uint64_t SshSession::connect_attempts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return impl_->connect_attempts_;
}

}  // namespace orch
