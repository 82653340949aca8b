// The slurm provider's sections of a cluster entry: "slurm" (how jobs are submitted) and "ssh"
// (how the login node is reached and its host key checked).
#include <string>
#include <string_view>

#include "scheduler/spec/container_section.h"
#include "scheduler/spec/job_shape_section.h"
#include "scheduler/spec/provider_sections.h"
#include "scheduler/spec/slurm_job_rules.h"

namespace orch {
namespace {

using yaml::MapView;

bool is_fingerprint(std::string_view s) {
  return s.size() > 7 && s.substr(0, 7) == "SHA256:";
}
bool is_signal_name(std::string_view s) {
  if (s.empty() || s.size() > 8) return false;
  for (char ch : s) {
    if (!((ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))) return false;
  }
  return true;
}
constexpr yaml::StringRule kFingerprint{is_fingerprint,
                                        "a SHA256 fingerprint as ssh-keygen -lf prints it"};
constexpr yaml::StringRule kSignalName{is_signal_name, "a signal name such as USR1"};

void read_ssh(const MapView& entry, ClusterSpec& c) {
  MapView ssh =
      entry.child("ssh", "ssh",
                  {"host", "port", "user", "key_file", "key_passphrase_env", "host_key",
                   "known_hosts", "trust_on_first_use", "connect_timeout_s", "command_timeout_s"},
                  "a map such as {host: login.alpha.example, user: train, "
                  "key_file: ~/.ssh/id_ed25519, known_hosts: ~/.ssh/known_hosts}");
  SshSpec& s = c.ssh;
  ssh.read_string("host", s.host, yaml::kNonEmpty, "a host name or address");
  ssh.read_int("port", s.port, 1, 65535, "a TCP port such as 22");
  ssh.read_string("user", s.user, yaml::kNonEmpty, "a user name");
  ssh.read_string("key_file", s.key_file, yaml::kNonEmpty, "a private key file");
  ssh.read_string("key_passphrase_env", s.key_passphrase_env, yaml::kEnvVarName,
                  "the name of an environment variable");
  ssh.read_string("host_key", s.host_key, kFingerprint, "a fingerprint such as SHA256:abc...");
  ssh.read_string("known_hosts", s.known_hosts, yaml::kNonEmpty, "a known_hosts file");
  ssh.read_bool("trust_on_first_use", s.trust_on_first_use, "true or false");
  ssh.read_number("connect_timeout_s", s.connect_timeout_s, kPositiveSeconds, "seconds such as 10");
  ssh.read_number("command_timeout_s", s.command_timeout_s, kPositiveSeconds, "seconds such as 60");
  if (entry.reader().failed()) return;
  const std::string want = "ssh {host, user, key_file} for a slurm cluster";
  if (!entry.has("ssh")) {
    entry.reader().fail(entry.position(),
                        "cluster \"" + c.name + "\" has provider slurm but no \"ssh\" section",
                        want);
    return;
  }
  ssh.require("host", "the login node's host name or address");
  ssh.require("user", "the user to log in as");
  ssh.require("key_file", "a private key file such as ~/.ssh/id_ed25519");
  if (entry.reader().failed()) return;
  if (s.host_key.empty() && s.known_hosts.empty() && !s.trust_on_first_use) {
    entry.reader().fail(
        ssh.position(),
        "ssh of cluster \"" + c.name + "\" gives no way to check the login node's host key",
        "host_key (a pinned SHA256 fingerprint) or known_hosts (a file), or "
        "trust_on_first_use: true");
  }
}

// slurm.job_options: {account: pinned, qos: forbidden, ...}; absent options are allowed.
void read_job_option_rules(MapView& slurm, SlurmSpec& s) {
  if (slurm.reader().failed() || !slurm.has("job_options")) return;
  MapView rules = slurm.child("job_options", "slurm.job_options", slurm_job_option_keys(),
                              "a map such as {account: pinned, qos: forbidden}");
  for (std::string_view name : kSlurmJobOptionNames) {
    std::string value;
    rules.read_string(name, value, yaml::kNonEmpty, "allowed, pinned or forbidden");
    if (slurm.reader().failed()) return;
    if (!rules.has(name)) continue;
    const SlurmOptionRule rule = value == "pinned"      ? SlurmOptionRule::pinned
                                 : value == "forbidden" ? SlurmOptionRule::forbidden
                                                        : SlurmOptionRule::allowed;
    if (value != to_string(rule)) {
      slurm.reader().fail(rules.value_position(name),
                          "slurm.job_options." + std::string(name) + " is \"" + value + "\"",
                          "allowed (a job's value wins), pinned (the cluster's value stands) or "
                          "forbidden (a job may not set it)");
      return;
    }
    s.job_options[std::string(name)] = rule;
  }
}

void read_slurm(const MapView& entry, ClusterSpec& c) {
  MapView slurm = entry.child(
      "slurm", "slurm",
      {"partition", "account", "qos", "reservation", "constraint", "exclusive", "job_options",
       "gres", "time_limit", "pre_term_signal", "pre_term_s", "containers"},
      "a map such as {partition: gpu, account: team, qos: normal}");
  SlurmSpec& s = c.slurm;
  // The options a job's own `slurm:` may also set: the same byte rules (job_shape_section.h).
  SlurmJobOptions own = cluster_slurm_options(s);
  read_slurm_job_options(slurm, own);
  s.partition = own.partition;
  s.account = own.account;
  s.qos = own.qos;
  s.reservation = own.reservation;
  s.constraint = own.constraint;
  s.exclusive = own.exclusive.value_or(false);
  read_job_option_rules(slurm, s);
  slurm.read_string("gres", s.gres, yaml::kNonEmpty, "a GRES name such as gpu or gpu:h100");
  slurm.read_string("time_limit", s.time_limit, yaml::kNonEmpty, "a Slurm time such as 2-00:00:00");
  slurm.read_string("pre_term_signal", s.pre_term_signal, kSignalName, "a signal such as USR1");
  slurm.read_int("pre_term_s", s.pre_term_s, 0, 65535, "seconds such as 120");
  read_container_runtime(
      slurm, s.containers,
      {ContainerRuntime::none, ContainerRuntime::pyxis, ContainerRuntime::apptainer});
}

}  // namespace

void read_slurm_sections(const MapView& entry, ClusterSpec& cluster) {
  read_slurm(entry, cluster);
  if (!entry.reader().failed()) read_ssh(entry, cluster);
}

}  // namespace orch
