// SshSession: connecting, key authentication, and the back-off after failed connects. The host
// key is checked in between, by ssh_host_key.cpp.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "adapters/ssh/ssh_session_impl.h"
#include "adapters/ssh/tcp_probe.h"

namespace orch {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kFirstBackoff{500};
constexpr milliseconds kMaxBackoff{30000};
// How long the handshake that may end a back-off waits (at most the connect timeout).
constexpr milliseconds kProbeTimeout{1000};

}  // namespace

using ssh_detail::format_seconds;
using ssh_detail::remaining;
using ssh_detail::seconds_to_ms;

Result<void> SshSession::Impl::ensure_connected() {
  if (session_ != nullptr && !connection_dead()) return {};
  drop();
  // During the back-off, a cheap TCP handshake each call (each poll) ends it as soon as the login
  // node answers again after it did not (the failed connect or an earlier handshake found it
  // silent): after an outage the site is back within a poll, not a doubled wait. A login node
  // that answers all along (a refused key, a changed host key) keeps the back-off.
  if (last_connect_error_ && Clock::now() < retry_at_) {
    const bool answers = tcp_port_answers(
        spec_.host, spec_.port, std::min(kProbeTimeout, seconds_to_ms(spec_.connect_timeout_s)));
    if (!answers) {
      port_seen_closed_ = true;
    } else if (port_seen_closed_) {
      retry_at_ = Clock::now();
    }
  }
  if (last_connect_error_ && Clock::now() < retry_at_) {
    Error e = *last_connect_error_;
    e.message += "; not retrying for another " + format_seconds(remaining(retry_at_)) +
                 " (back-off after " + std::to_string(failed_connects_) + " failed connect" +
                 (failed_connects_ == 1 ? "" : "s") + ")";
    return e;
  }
  port_seen_closed_ = false;  // connect() sets it when the login node does not answer
  auto result = connect();
  if (result.ok()) {
    clear_backoff();
    return {};
  }
  drop();
  // A key this server cannot use: its own configuration, no back-off (and no site to blame).
  if (result.error().kind == ErrorKind::misconfigured) return result;
  backoff_ = backoff_.count() == 0 ? kFirstBackoff : std::min(backoff_ * 2, kMaxBackoff);
  retry_at_ = Clock::now() + backoff_;
  ++failed_connects_;
  last_connect_error_ = result.error();
  Error e = result.error();
  e.message += "; next attempt in " + format_seconds(backoff_) + " at the earliest";
  return e;
}

Result<ssh_key> SshSession::Impl::load_key() const {
  if (spec_.key_file.empty()) {
    return make_error(ErrorKind::misconfigured, prefix() +
                                                    "ssh.key_file is not set (key "
                                                    "authentication is the only kind used)");
  }
  const std::string path = home_expanded(spec_.key_file);
  if (::access(path.c_str(), R_OK) != 0) {
    return make_error(ErrorKind::misconfigured,
                      prefix() + "cannot read ssh.key_file " + path + ": " + std::strerror(errno));
  }
  const char* passphrase = nullptr;
  if (!spec_.key_passphrase_env.empty()) {
    passphrase = std::getenv(spec_.key_passphrase_env.c_str());
    if (passphrase == nullptr) {
      return make_error(ErrorKind::misconfigured,
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
    return make_error(ErrorKind::misconfigured,
                      prefix() + "cannot load private key " + path + " (" + why + ")");
  }
  return key;
}

Result<void> SshSession::Impl::connect() {
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
      spec_.known_hosts.empty() ? std::string("/dev/null") : home_expanded(spec_.known_hosts);
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
    port_seen_closed_ = true;
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
                       home_expanded(spec_.key_file) + " failed: " + why);
  }
  return {};
}

}  // namespace orch
