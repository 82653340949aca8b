// SshSession: host-key verification. libssh only negotiates; the key is checked here, after
// ssh_connect and before authentication, against the pinned fingerprint (ssh.host_key), the
// spec's known_hosts file (never ~/.ssh/known_hosts or /etc/ssh: the session's global
// known_hosts file is /dev/null), and the key trusted on first use earlier in this session.
#include <fstream>
#include <string>
#include <vector>

#include "adapters/ssh/fingerprint.h"
#include "adapters/ssh/ssh_session_impl.h"

namespace orch {
namespace {

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

}  // namespace

std::vector<std::string> SshSession::Impl::recorded_entries(const std::string& file) const {
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
      found.push_back("line " + std::to_string(n) + " records " + fingerprint_of(entry->publickey) +
                      " (" + ssh_key_type_to_char(ssh_key_type(entry->publickey)) + ")");
    }
    ssh_knownhosts_entry_free(entry);
  }
  return found;
}

Result<void> SshSession::Impl::check_host_key() {
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
  const std::string known_hosts = home_expanded(spec_.known_hosts);
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
    return unreachable("host key of " + endpoint() + " changed: this session trusted " + tofu_pin_ +
                       " on first use, " + offered +
                       "; refusing to connect. If the change is legitimate, pin the new key "
                       "in ssh.host_key and restart the orchestrator");
  }
  if (!trusted && tofu_pin_.empty()) {
    if (!spec_.trust_on_first_use) {
      const std::string where =
          spec_.known_hosts.empty()
              ? std::string("no ssh.host_key is pinned and no ssh.known_hosts is given")
              : "it matches neither ssh.host_key nor an entry for " + known_hosts_name() + " in " +
                    known_hosts;
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

}  // namespace orch
