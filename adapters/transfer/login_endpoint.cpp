#include "adapters/transfer/login_endpoint.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "adapters/process/run_captured.h"

namespace orch::transfer {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::string where(const ClusterSpec& c) {
  return "cluster " + c.name + " (" + c.ssh.host + ":" + std::to_string(c.ssh.port) + ")";
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

int timeout_s(const ClusterSpec& c) {
  const double t = c.ssh.connect_timeout_s > 0 ? c.ssh.connect_timeout_s : 10;
  return static_cast<int>(std::ceil(t));
}

Result<void> make_private_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(ErrorKind::io, "cannot make " + dir + ": " + ec.message());
  ::chmod(dir.c_str(), 0700);
  return Ok{};
}

// Writes `text` to `path` (mode 0600) through a temporary file and a rename.
Result<void> write_private_file(const std::string& path, const std::string& text) {
  static std::atomic<unsigned> counter{0};
  const std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out.flush()) return make_error(ErrorKind::io, "cannot write " + tmp);
  }
  ::chmod(tmp.c_str(), 0600);
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return make_error(ErrorKind::io, "cannot rename " + tmp + ": " + ec.message());
  return Ok{};
}

}  // namespace

std::vector<std::string> keyscan_lines(std::string_view output) {
  std::vector<std::string> lines;
  std::stringstream ss{std::string(output)};
  for (std::string line; std::getline(ss, line);) {
    line = trimmed(line);
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::stringstream words(line);
    std::string host, type, key;
    if (words >> host >> type >> key) lines.push_back(line.substr(first));
  }
  return lines;
}

std::optional<std::string> keygen_fingerprint(std::string_view line) {
  std::stringstream ss{std::string(line)};
  std::string bits, fp;
  if (!(ss >> bits >> fp) || fp.rfind("SHA256:", 0) != 0) return std::nullopt;
  return fp;
}

SshEndpoint peer_endpoint(const PeerSpec& peer, int connect_timeout_s) {
  SshEndpoint e;
  e.host = peer.host;
  e.port = peer.port;
  e.user = peer.user;
  e.key_file = peer.key_file;  // the destination's ssh expands a leading ~ itself
  e.known_hosts = peer.known_hosts;
  e.connect_timeout_s = connect_timeout_s;
  return e;
}

Result<SshEndpoint> LoginEndpoints::endpoint(const ClusterSpec& c) {
  SshEndpoint e;
  e.host = c.ssh.host;
  e.port = c.ssh.port;
  e.user = c.ssh.user;
  e.key_file = home_expanded(c.ssh.key_file);
  e.connect_timeout_s = timeout_s(c);
  if (!c.ssh.known_hosts.empty()) {
    e.known_hosts = home_expanded(c.ssh.known_hosts);
    e.accept_new = c.ssh.trust_on_first_use;
  } else if (!c.ssh.host_key.empty()) {
    auto file = pinned_known_hosts(c);
    if (!file) return file.error();
    e.known_hosts = *file;
  } else if (c.ssh.trust_on_first_use) {
    if (auto r = make_private_dir(dir_); !r) return r.error();
    e.known_hosts = dir_ + "/" + c.name + ".first-use";
    e.accept_new = true;
  } else {
    return make_error(ErrorKind::invalid,
                      where(c) +
                          " has neither ssh.known_hosts nor ssh.host_key: transfers "
                          "check the login node's host key strictly against one of them");
  }
  return e;
}

Result<std::string> LoginEndpoints::pinned_known_hosts(const ClusterSpec& c) {
  const std::string pin = normalise_fingerprint(c.ssh.host_key);
  const std::string key = c.name + " " + c.ssh.host + " " + std::to_string(c.ssh.port) + " " + pin;
  std::lock_guard lock(mu_);
  if (auto it = pinned_.find(key); it != pinned_.end()) return it->second;
  if (auto r = make_private_dir(dir_); !r) return r.error();

  const int t = timeout_s(c);
  auto scan = process::run_captured(
      {"ssh-keyscan", "-T", std::to_string(t), "-p", std::to_string(c.ssh.port), "--", c.ssh.host},
      {.timeout = milliseconds((t + 5) * 1000), .grace = milliseconds(500)});
  if (!scan) return scan.error();
  const auto lines = keyscan_lines(scan->out);
  if (lines.empty()) {
    return make_error(ErrorKind::unreachable,
                      "cannot read the host key of " + where(c) + " with ssh-keyscan" +
                          (scan->timed_out ? " (timed out)" : "") + ": " + trimmed(scan->err));
  }
  std::string matching;
  std::string offered;
  const std::string probe = dir_ + "/.scan-" + std::to_string(::getpid());
  for (const auto& line : lines) {
    if (auto w = write_private_file(probe, line + "\n"); !w) return w.error();
    auto fp = process::run_captured({"ssh-keygen", "-lf", probe},
                                    {.timeout = milliseconds(10000), .grace = milliseconds(500)});
    if (!fp) return fp.error();
    auto got = keygen_fingerprint(fp->out);
    if (!got) continue;
    std::stringstream words(line);
    std::string host, type;
    words >> host >> type;
    offered += (offered.empty() ? "" : ", ") + *got + " (" + type + ")";
    if (*got == pin) matching += line + "\n";
  }
  std::error_code ec;
  fs::remove(probe, ec);
  if (matching.empty()) {
    return make_error(ErrorKind::unreachable,
                      "host key of " + where(c) + " does not match the pinned ssh.host_key " + pin +
                          ": the server offers " + (offered.empty() ? "no readable key" : offered) +
                          "; refusing to transfer. If the change is legitimate, update "
                          "ssh.host_key");
  }
  const std::string file = dir_ + "/" + c.name + ".pinned";
  if (auto w = write_private_file(file, matching); !w) return w.error();
  pinned_[key] = file;
  return file;
}

}  // namespace orch::transfer
