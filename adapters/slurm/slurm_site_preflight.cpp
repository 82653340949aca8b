// SlurmSite::preflight (`orchestrate cluster check`, scheduler/model/preflight.h): every check in
// the order a launch meets them, each tried only when what it stands on passed. Before SSH: the
// login node's port and the key file; then the SSH session (host key, key accepted); then sinfo,
// the partition, account and QoS, rsync, the storage root from a compute node, the agent.

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "adapters/slurm/preflight_command.h"
#include "adapters/slurm/probe_command.h"
#include "adapters/slurm/slurm_site.h"
#include "adapters/ssh/shell_quote.h"
#include "adapters/ssh/tcp_probe.h"
#include "scheduler/common/text.h"

namespace orch {
namespace {

using std::chrono::milliseconds;

// How long the storage test's srun may wait for a node before the login node tests instead.
constexpr int kStorageWaitS = 20;

CommandAnswer answer_of(const Result<ExecResult>& r) {
  if (!r) return CommandAnswer{std::nullopt, "", r.error().message};
  return CommandAnswer{r->exit_status, r->out, r->err};
}

PreflightCheck port_check(const SshSpec& ssh) {
  const std::string where = ssh.host + ":" + std::to_string(ssh.port);
  const auto timeout = milliseconds(static_cast<long>(ssh.connect_timeout_s * 1000.0));
  if (tcp_port_answers(ssh.host, ssh.port, timeout))
    return check_passed("port", where + " answers");
  return check_failed("port", where +
                                  " does not accept connections (closed, filtered, or the "
                                  "host is down): check ssh.host and ssh.port, and that this "
                                  "server may reach the login node");
}

PreflightCheck key_check(const SshSpec& ssh) {
  if (ssh.key_file.empty()) {
    return check_failed("key-file",
                        "ssh.key_file is not set: key authentication is the only "
                        "kind used");
  }
  const std::string path = home_expanded(ssh.key_file);
  if (::access(path.c_str(), R_OK) != 0) {
    return check_failed("key-file", "cannot read " + path + ": " + std::strerror(errno) +
                                        ": fix ssh.key_file, or the file's permissions for the "
                                        "server's user");
  }
  return check_passed("key-file", path + " is readable");
}

}  // namespace

std::vector<PreflightCheck> SlurmSite::preflight() {
  std::vector<PreflightCheck> out = {port_check(spec_.ssh), key_check(spec_.ssh)};
  const char* before_ssh = !out[0].ok ? "port" : !out[1].ok ? "key-file" : nullptr;
  if (before_ssh != nullptr) {
    for (const char* name :
         {"ssh", "sinfo", "partition", "account", "qos", "rsync", "storage-root", "agent"}) {
      out.push_back(check_skipped(name, before_ssh));
    }
    return out;
  }
  auto hello = ssh_->exec("true");
  if (!hello) {
    out.push_back(check_failed("ssh", hello.error().message));
    for (const char* name :
         {"sinfo", "partition", "account", "qos", "rsync", "storage-root", "agent"}) {
      out.push_back(check_skipped(name, "ssh"));
    }
    return out;
  }
  out.push_back(
      check_passed("ssh", "host key accepted (" + ssh_->server_fingerprint() + "), logged in as " +
                              (spec_.ssh.user.empty() ? "the server's user" : spec_.ssh.user)));
  preflight_slurm(out);
  return out;
}

void SlurmSite::preflight_slurm(std::vector<PreflightCheck>& out) {
  const CommandAnswer partitions = answer_of(ssh_->exec(slurm::kPreflightPartitions));
  const bool sinfo_ok = partitions.exit_status && *partitions.exit_status == 0;
  out.push_back(sinfo_ok
                    ? check_passed("sinfo", "sinfo answers")
                    : check_failed("sinfo", "sinfo failed: " + partitions.err + partitions.out +
                                                ": is Slurm's controller up, and sinfo "
                                                "on the ssh user's PATH?"));
  out.push_back(sinfo_ok ? judge_partition(spec_.slurm.partition, partitions)
                         : check_skipped("partition", "sinfo"));
  out.push_back(association_check("account", "slurm.account", spec_.slurm.account,
                                  slurm::accounts_command(spec_.slurm.account)));
  out.push_back(
      association_check("qos", "slurm.qos", spec_.slurm.qos, slurm::qos_command(spec_.slurm.qos)));
  out.push_back(judge_rsync(answer_of(ssh_->exec(slurm::kPreflightRsync))));
  if (spec_.slurm.containers == ContainerRuntime::pyxis) {
    out.push_back(judge_container_runtime("pyxis", answer_of(ssh_->exec(slurm::kPreflightPyxis))));
  } else if (spec_.slurm.containers == ContainerRuntime::apptainer) {
    out.push_back(
        judge_container_runtime("apptainer", answer_of(ssh_->exec(slurm::kPreflightApptainer))));
  }
  auto storage = slurm::storage_test_command(spec_.storage_root, spec_.slurm, kStorageWaitS);
  if (!storage) {
    out.push_back(check_failed("storage-root", storage.error().message));
  } else {
    const auto timeout = milliseconds(static_cast<long>(spec_.ssh.command_timeout_s * 1000.0) +
                                      kStorageWaitS * 1000L);
    out.push_back(
        slurm::storage_verdict(spec_.storage_root, answer_of(ssh_->exec(*storage, timeout))));
  }
  if (!out.back().ok) {
    out.push_back(check_skipped("agent", "storage-root"));
    return;
  }
  out.push_back(agent_check());
}

PreflightCheck SlurmSite::association_check(const std::string& what, const std::string& key,
                                            const std::string& wanted,
                                            const Result<std::string>& command) {
  if (wanted.empty()) return judge_association(what, key, wanted, CommandAnswer{});
  if (!command) return check_failed(what, command.error().message);
  return judge_association(what, key, wanted, answer_of(ssh_->exec(*command)));
}

PreflightCheck SlurmSite::agent_check() {
  auto remote = ship_agent(slurm::default_probe_dir(spec_));
  if (!remote) return check_failed("agent", "cannot upload the agent: " + remote.error().message);
  auto quoted = shell_quote(*remote);
  if (!quoted) return check_failed("agent", quoted.error().message);
  auto ran = ssh_->exec(*quoted + " --help");
  if (!ran || ran->exit_status != 0) {
    const std::string why = !ran ? ran.error().message : ran->err.substr(0, 200);
    return check_failed("agent", *remote + " does not run on the login node: " + why +
                                     ": the agent must be built for the cluster's architecture");
  }
  return check_passed("agent", *remote + " uploaded and runs");
}

}  // namespace orch
