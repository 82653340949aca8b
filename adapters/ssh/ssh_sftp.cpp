// SshSession: SFTP upload (a temporary file, then a rename; `mv -f` over an exec channel when
// the target exists, since SFTP v3 cannot rename over it) and ranged read. Both run under the
// watchdog, bounded by command_timeout_s.
#include <fcntl.h>
#include <sys/types.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "adapters/ssh/shell_quote.h"
#include "adapters/ssh/ssh_session_impl.h"

namespace orch {

using ssh_detail::format_seconds;
using ssh_detail::kIoChunk;
using ssh_detail::remaining;
using ssh_detail::seconds_to_ms;
using ssh_detail::Watchdog;

Error SshSession::Impl::sftp_failure(const std::string& what, const std::string& path,
                                     OpState& state) {
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

Result<void> SshSession::Impl::ensure_sftp(OpState& state) {
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

Result<void> SshSession::Impl::upload_once(const std::string& path, const std::string& content,
                                           int mode, OpState& state) {
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

Result<std::string> SshSession::Impl::read_once(const std::string& path, std::uint64_t offset,
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

}  // namespace orch
