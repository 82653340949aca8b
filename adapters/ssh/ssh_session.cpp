// SshSession on libssh 0.10: the public calls, and the connection's life. See ssh_session.h for
// the contract and ssh_session_impl.h for how the implementation is split and how deadlines
// are kept.
#include "adapters/ssh/ssh_session.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <utility>

#include "adapters/ssh/ssh_session_impl.h"

namespace orch {

using ssh_detail::OpState;
using ssh_detail::seconds_to_ms;

void SshSession::Impl::set_timeout(milliseconds ms) {
  // libssh reads timeout 0/0 as "forever": never let it get there.
  const long long total = std::max<long long>(1, ms.count());
  long sec = static_cast<long>(total / 1000);
  long usec = static_cast<long>((total % 1000) * 1000);
  ssh_options_set(session_, SSH_OPTIONS_TIMEOUT, &sec);
  ssh_options_set(session_, SSH_OPTIONS_TIMEOUT_USEC, &usec);
}

void SshSession::Impl::drop() {
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

void SshSession::Impl::clear_backoff() {
  backoff_ = milliseconds(0);
  last_connect_error_.reset();
  failed_connects_ = 0;
  port_seen_closed_ = false;
}

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
