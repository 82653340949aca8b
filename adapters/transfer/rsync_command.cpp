#include "adapters/transfer/rsync_command.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "adapters/ssh/shell_quote.h"

namespace orch::transfer {
namespace {

bool name_char(char c, std::string_view extra) {
  return std::isalnum(static_cast<unsigned char>(c)) || extra.find(c) != std::string_view::npos;
}

// A host or user name that no program could read as an option, a second word or a path.
Result<void> check_name(std::string_view what, std::string_view value, std::string_view extra,
                        bool may_be_empty) {
  if (value.empty()) {
    if (may_be_empty) return Ok{};
    return make_error(ErrorKind::invalid, std::string(what) + " is empty");
  }
  bool ok = value.front() != '-';
  for (char c : value) ok = ok && name_char(c, extra);
  if (!ok) {
    return make_error(ErrorKind::invalid, std::string(what) + " '" + std::string(value) +
                                              "' is not a plain name (letters, digits and " +
                                              std::string(extra) + ", not starting with '-')");
  }
  return Ok{};
}

Result<void> check_endpoint(const SshEndpoint& e) {
  if (auto r = check_name("ssh host", e.host, ".-_:%", false); !r) return r;
  if (auto r = check_name("ssh user", e.user, ".-_", true); !r) return r;
  if (e.port < 1 || e.port > 65535) {
    return make_error(ErrorKind::invalid, "ssh port " + std::to_string(e.port) + " of " + e.host +
                                              " is out of range (1-65535)");
  }
  return Ok{};
}

Result<void> check_path(std::string_view what, const std::string& path) {
  if (path.empty() || path.front() != '/') {
    return make_error(ErrorKind::invalid,
                      std::string(what) + " path '" + path + "' is not absolute");
  }
  if (path.find('\0') != std::string::npos) {
    return make_error(ErrorKind::invalid, std::string(what) + " path holds a NUL byte");
  }
  return Ok{};
}

std::string without_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

std::uint64_t bwlimit_kib(double cap_bytes_per_s) {
  if (!(cap_bytes_per_s > 0)) return 0;
  const double kib = std::ceil(cap_bytes_per_s / 1024.0);
  return kib < 1 ? 1 : static_cast<std::uint64_t>(kib);
}

std::vector<std::string> rsync_flags(const RsyncSettings& settings) {
  std::vector<std::string> flags = {"-a", "--partial", "--info=progress2", "--no-inc-recursive",
                                    "-s"};
  if (settings.checksum) flags.push_back("--checksum");
  if (const auto kib = bwlimit_kib(settings.cap_bytes_per_s); kib > 0) {
    flags.push_back("--bwlimit=" + std::to_string(kib));
  }
  return flags;
}

Result<std::vector<std::string>> ssh_options(const SshEndpoint& e) {
  if (auto r = check_endpoint(e); !r) return r.error();
  std::vector<std::string> o = {"-F", "/dev/null", "-p", std::to_string(e.port)};
  if (!e.key_file.empty()) {
    o.insert(o.end(), {"-i", e.key_file, "-o", "IdentitiesOnly=yes"});
  }
  o.insert(o.end(),
           {"-o", "BatchMode=yes", "-o",
            std::string("StrictHostKeyChecking=") + (e.accept_new ? "accept-new" : "yes")});
  if (!e.known_hosts.empty()) o.insert(o.end(), {"-o", "UserKnownHostsFile=" + e.known_hosts});
  o.insert(o.end(), {"-o", "ConnectTimeout=" + std::to_string(std::max(1, e.connect_timeout_s)),
                     "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4"});
  return o;
}

Result<std::vector<std::string>> ssh_command_argv(const SshEndpoint& e,
                                                  const std::string& remote_command) {
  auto options = ssh_options(e);
  if (!options) return options.error();
  std::vector<std::string> argv = {"ssh"};
  argv.insert(argv.end(), options->begin(), options->end());
  if (!e.user.empty()) argv.insert(argv.end(), {"-l", e.user});
  argv.insert(argv.end(), {"--", e.host, remote_command});
  return argv;
}

Result<std::string> rsync_rsh_quote(std::string_view word) {
  auto shell = shell_quote(word);  // refuses NUL; the same text whenever word has no '
  if (!shell) return shell.error();
  if (word.find('\'') == std::string_view::npos) return *shell;
  std::string quoted = "'";
  for (char c : word) quoted += (c == '\'') ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

Result<std::string> rsync_remote_shell(const SshEndpoint& e) {
  auto options = ssh_options(e);
  if (!options) return options.error();
  std::string rsh = "ssh";
  for (const auto& word : *options) {
    auto q = rsync_rsh_quote(word);
    if (!q) return q.error();
    rsh += " " + *q;
  }
  return rsh;
}

std::string remote_location(const SshEndpoint& e, const std::string& path) {
  std::string host = e.host.find(':') != std::string::npos ? "[" + e.host + "]" : e.host;
  return (e.user.empty() ? "" : e.user + "@") + host + ":" + path;
}

std::string source_arg(const std::string& path, bool directory) {
  return directory ? without_trailing_slashes(path) + (path == "/" ? "" : "/") : path;
}

std::string directory_to_create(const std::string& path, bool directory) {
  std::string p = without_trailing_slashes(path);
  if (directory) return p;
  const auto slash = p.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : p.substr(0, slash);
}

Result<std::vector<std::string>> local_copy_argv(const RsyncSettings& s, const std::string& from,
                                                 const std::string& to) {
  if (auto r = check_path("source", from); !r) return r.error();
  if (auto r = check_path("destination", to); !r) return r.error();
  std::vector<std::string> argv = {"rsync"};
  auto flags = rsync_flags(s);
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {source_arg(from, s.directory), source_arg(to, s.directory)});
  return argv;
}

Result<std::vector<std::string>> pull_argv(const RsyncSettings& s, const SshEndpoint& source,
                                           const std::string& from, const std::string& to) {
  if (auto r = check_path("source", from); !r) return r.error();
  if (auto r = check_path("destination", to); !r) return r.error();
  auto rsh = rsync_remote_shell(source);
  if (!rsh) return rsh.error();
  std::vector<std::string> argv = {"rsync"};
  auto flags = rsync_flags(s);
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-e", *rsh, remote_location(source, source_arg(from, s.directory)),
                           source_arg(to, s.directory)});
  return argv;
}

Result<std::vector<std::string>> push_argv(const RsyncSettings& s, const std::string& from,
                                           const SshEndpoint& destination, const std::string& to) {
  if (auto r = check_path("source", from); !r) return r.error();
  if (auto r = check_path("destination", to); !r) return r.error();
  auto rsh = rsync_remote_shell(destination);
  if (!rsh) return rsh.error();
  auto dir = shell_quote(directory_to_create(to, s.directory));
  if (!dir) return dir.error();
  std::vector<std::string> argv = {"rsync"};
  auto flags = rsync_flags(s);
  argv.insert(argv.end(), flags.begin(), flags.end());
  // rsync puts --rsync-path, unquoted, at the front of the command the remote shell runs.
  argv.insert(argv.end(), {"-e", *rsh, "--rsync-path=mkdir -p " + *dir + " && rsync",
                           source_arg(from, s.directory),
                           remote_location(destination, source_arg(to, s.directory))});
  return argv;
}

namespace {

// rsync_argv run by a login node's shell, in a process group named by pid_file.
Result<std::string> remote_rsync_command(const std::vector<std::string>& rsync_argv,
                                         const std::string& to, bool directory,
                                         const std::string& pid_file) {
  if (auto r = check_path("pid file", pid_file); !r) return r.error();
  auto rsync_line = shell_command(rsync_argv);
  auto pid = shell_quote(pid_file);
  auto dir = shell_quote(directory_to_create(to, directory));
  if (!rsync_line) return rsync_line.error();
  if (!pid) return pid.error();
  if (!dir) return dir.error();
  return "echo $$ > " + *pid + " && mkdir -p " + *dir + " && LC_ALL=C " + *rsync_line +
         "; rc=$?; rm -f " + *pid + "; exit $rc";
}

}  // namespace

Result<std::string> remote_pull_command(const RsyncSettings& s, const SshEndpoint& peer,
                                        const std::string& from, const std::string& to,
                                        const std::string& pid_file) {
  auto rsync = pull_argv(s, peer, from, to);
  if (!rsync) return rsync.error();
  return remote_rsync_command(*rsync, to, s.directory, pid_file);
}

Result<std::string> remote_local_copy_command(const RsyncSettings& s, const std::string& from,
                                              const std::string& to, const std::string& pid_file) {
  auto rsync = local_copy_argv(s, from, to);
  if (!rsync) return rsync.error();
  return remote_rsync_command(*rsync, to, s.directory, pid_file);
}

Result<std::string> remote_stop_command(const std::string& pid_file) {
  if (auto r = check_path("pid file", pid_file); !r) return r.error();
  auto pid = shell_quote(pid_file);
  if (!pid) return pid.error();
  return "p=$(cat " + *pid + " 2>/dev/null) || exit 0; kill -TERM -- \"-$p\" 2>/dev/null || " +
         "kill -TERM \"$p\" 2>/dev/null; rm -f " + *pid;
}

std::string rsync_exit_meaning(int code) {
  switch (code) {
    case 0:
      return "success";
    case 1:
      return "syntax or usage error";
    case 2:
      return "protocol incompatibility";
    case 3:
      return "errors selecting input/output files, dirs";
    case 4:
      return "requested action not supported";
    case 5:
      return "error starting client-server protocol";
    case 6:
      return "daemon unable to append to log-file";
    case 10:
      return "error in socket I/O";
    case 11:
      return "error in file I/O";
    case 12:
      return "error in rsync protocol data stream";
    case 13:
      return "errors with program diagnostics";
    case 14:
      return "error in IPC code";
    case 20:
      return "received SIGUSR1 or SIGINT";
    case 21:
      return "some error returned by waitpid()";
    case 22:
      return "error allocating core memory buffers";
    case 23:
      return "partial transfer due to error";
    case 24:
      return "partial transfer due to vanished source files";
    case 25:
      return "the --max-delete limit stopped deletions";
    case 30:
      return "timeout in data send/receive";
    case 35:
      return "timeout waiting for daemon connection";
    case 126:
      return "command found but not executable";
    case 127:
      return "command not found (is rsync installed there?)";
    case 255:
      return "ssh failed (connection, host key or authentication)";
    default:
      return "unknown exit code";
  }
}

}  // namespace orch::transfer
