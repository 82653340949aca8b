#pragma once
// SlurmLab: real Slurm clusters on this machine for integration tests (label slurm).
//
// Each lab is brought up by tests/lab/slurm/up.sh in a fresh directory /tmp/orch-lab-XXXXXX with
// port bases nobody uses (probed by binding), so every test can have its own lab while ctest runs
// tests in parallel. Per cluster: slurmctld, one slurmd per node (16 CPUs, 8 fake GPUs each) and a
// login node, an sshd on 127.0.0.1 with its own host key, reached as root with the lab's key and
// strict host-key checking against the lab's known_hosts. The destructor stops everything by PID
// (down.sh --purge) and removes the directory; ORCH_LAB_KEEP=1 in the environment keeps the lab
// for a look afterwards (then: tests/lab/slurm/down.sh DIR --purge). A lab whose test process
// died without tearing it down is stopped and removed by the next start(). See
// tests/lab/slurm/README.md.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch::test {

// One cluster of a lab, as up.sh reports it.
struct LabCluster {
  std::string name;
  std::string host = "127.0.0.1";
  std::string user = "root";
  std::string key_file;              // the lab's private client key
  std::string known_hosts;           // every login node's [127.0.0.1]:port key, as first made
  std::string host_key_fingerprint;  // SHA256:... of the login node's key at start
  std::string slurm_conf;
  std::string storage_root;  // <lab>/<name>/storage, for run directories
  int ssh_port = 0;
  std::vector<std::string> nodes;  // e.g. alpha-n1, alpha-n2
};

// What a command run by the lab printed and how it ended.
struct LabCommand {
  int exit_code = -1;  // -1 when a signal ended it or it ran past its deadline
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Runs argv (argv[0] is looked up in PATH, then /usr/sbin:/usr/bin:/sbin:/bin) with `env`
// ("NAME=value") added to this process's environment and `input` on its stdin, in directory
// `cwd` (empty: this process's). A command still running at the deadline is killed with its
// process group.
LabCommand run_lab_command(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env = {},
                           std::chrono::milliseconds timeout = std::chrono::seconds(60),
                           const std::string& input = "", const std::string& cwd = "");

class SlurmLab {
 public:
  // Brings up the named clusters (lowercase letters and digits) under a fresh directory with free
  // port bases, retrying with other ports on a port clash. The error carries up.sh's output.
  // slurmd_timeout_s: Slurm's SlurmdTimeout (0: up.sh's default of 4 s; production clusters
  // run 300, which a test of faster-than-Slurm detection asks for).
  static Result<std::unique_ptr<SlurmLab>> start(std::vector<std::string> names,
                                                 int nodes_per_cluster = 1,
                                                 int slurmd_timeout_s = 0);
  ~SlurmLab();  // down.sh --purge, then removes the directory (unless ORCH_LAB_KEEP=1)
  SlurmLab(const SlurmLab&) = delete;
  SlurmLab& operator=(const SlurmLab&) = delete;

  const std::string& dir() const { return dir_; }
  const std::vector<LabCluster>& clusters() const { return clusters_; }
  // Throws std::out_of_range for a name the lab does not have.
  const LabCluster& cluster(const std::string& name) const;

  // A ClusterSpec for provider slurm pointing at this cluster: ssh {host, port, user, key_file,
  // known_hosts}, storage_root, nodes, gpus_per_node 8, accelerator "cpu-slot", peak_tflops
  // 0.001, poll_interval_ms 200, unreachable_grace_s 5.
  ClusterSpec cluster_spec(const std::string& name) const;

  // A Slurm command run on this machine against the cluster (SLURM_CONF set), e.g.
  // {"squeue", "-h"}: its stdout, or an error with its stderr when it fails. It runs in the
  // lab's directory, so a batch job submitted without --chdir and --output writes its
  // slurm-N.out there (removed with the lab), never into the test's working directory.
  Result<std::string> slurm(const std::string& name, const std::vector<std::string>& argv) const;
  // The State= of `scontrol show node -o NODE`: IDLE, MIXED, DOWN+NOT_RESPONDING, IDLE+DRAIN...
  Result<std::string> node_state(const std::string& name, const std::string& node) const;

  // The OpenSSH client command line that runs `command` on the cluster's login node with the
  // lab's key and strict host-key checking against the lab's known_hosts (no ~/.ssh/config).
  std::vector<std::string> ssh_argv(const std::string& name, const std::string& command) const;
  // Runs it, with `input` on its stdin (e.g. a batch script for `sbatch --parsable`).
  LabCommand ssh(const std::string& name, const std::string& command,
                 const std::string& input = "") const;

  // Fault injection (tests/lab/slurm/ctl.sh).
  // A node crash: SIGKILL its slurmd, its slurmstepd's and their job processes. Slurm marks the
  // node NOT_RESPONDING after a few seconds and DOWN (jobs requeued or NODE_FAIL) after ~15 s.
  Result<void> kill_node(const std::string& name, const std::string& node);
  // Starts the node's slurmd again; a node DOWN for not responding comes back (ReturnToService=1).
  Result<void> restart_node(const std::string& name, const std::string& node);
  // An admin's DOWN (scontrol update state=down reason=...): stays until resume_node.
  Result<void> set_node_down(const std::string& name, const std::string& node,
                             const std::string& reason);
  Result<void> resume_node(const std::string& name, const std::string& node);
  // The login node's sshd and its sessions stop: new connections are refused.
  Result<void> stop_login(const std::string& name);
  Result<void> start_login(const std::string& name);
  // The login node hangs: its sshd and sessions stopped (SIGSTOP), connections accepted by the
  // kernel but never answered; resume_login lets them go on (SIGCONT).
  Result<void> pause_login(const std::string& name);
  Result<void> resume_login(const std::string& name);
  // A new host key for the login node, sshd restarted; known_hosts keeps the old key, so strict
  // clients refuse the login node from now on. Returns the new fingerprint (SHA256:...).
  Result<std::string> change_host_key(const std::string& name);
  // A slow node: the niceness of the node's slurmd, of what it runs now and (through the lab's
  // TaskProlog) of the scheduler autogroup of every task it starts later becomes `nice` (-20..19,
  // 0 undoes it). On an idle machine that changes little; under CPU contention (start_cpu_hog)
  // that node's jobs get a few percent of a CPU (tests/lab/slurm/README.md, "A slow node").
  Result<void> renice_node(const std::string& name, const std::string& node, int nice);
  // `count` busy loops (0: one per CPU), pinned round robin to the CPUs, in the background for
  // at most `seconds`, replacing a hog already running; stop_cpu_hog or down() ends them sooner.
  // The hog is the lab's, not one cluster's (ctl.sh keeps it under the first cluster).
  Result<void> start_cpu_hog(int seconds, int count = 0);
  Result<void> stop_cpu_hog();

  // Stops the lab now (down.sh --purge); the destructor then only removes the directory.
  Result<void> down();

 private:
  explicit SlurmLab(std::string dir) : dir_(std::move(dir)) {}
  Result<std::string> ctl(const std::string& name, const std::vector<std::string>& args) const;

  std::string dir_;
  std::vector<LabCluster> clusters_;
  bool down_ = false;
};

}  // namespace orch::test
