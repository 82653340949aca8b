#include "testkit/slurm_lab.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace orch::test {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kScripts = ORCH_LAB_SCRIPTS;
constexpr int kPortClash = 75;  // up.sh's exit code when a port is taken

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

// argv[0] as a path: itself when it has a slash, else the first executable in PATH or the
// system directories.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs =
      std::string(path ? path : "") + ":/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
  std::stringstream ss(dirs);
  for (std::string dir; std::getline(ss, dir, ':');) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;  // posix_spawn then fails with ENOENT
}

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

// Whether nothing listens or is bound on 127.0.0.1:port.
bool port_free(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

struct PortBases {
  int ssh = 0;
  int slurm = 0;
};

// Random bases below the kernel's ephemeral range whose every port is free now: ssh base+i per
// cluster, Slurm base+10i (slurmctld) and base+10i+1.. (one slurmd per node).
Result<PortBases> pick_ports(int clusters, int nodes, std::mt19937& rng) {
  std::uniform_int_distribution<int> ssh_dist(20000, 31000);
  std::uniform_int_distribution<int> slurm_dist(1100, 1900);  // x10: 11000..19000
  for (int attempt = 0; attempt < 100; ++attempt) {
    PortBases b{ssh_dist(rng), slurm_dist(rng) * 10};
    bool ok = true;
    for (int i = 0; ok && i < clusters; ++i) {
      ok = port_free(b.ssh + i);
      for (int k = 0; ok && k <= nodes; ++k) ok = port_free(b.slurm + 10 * i + k);
    }
    if (ok) return b;
  }
  return make_error(ErrorKind::internal, "no free ports for a Slurm lab after 100 tries");
}

// "CLUSTER name=alpha ssh_port=2222 ..." -> LabCluster.
std::optional<LabCluster> parse_cluster_line(const std::string& line) {
  std::stringstream ss(line);
  std::string word;
  ss >> word;
  if (word != "CLUSTER") return std::nullopt;
  std::map<std::string, std::string> kv;
  while (ss >> word) {
    auto eq = word.find('=');
    if (eq != std::string::npos) kv[word.substr(0, eq)] = word.substr(eq + 1);
  }
  LabCluster c;
  c.name = kv["name"];
  c.host = kv["host"];
  c.user = kv["user"];
  c.key_file = kv["key"];
  c.known_hosts = kv["known_hosts"];
  c.host_key_fingerprint = kv["host_key_fingerprint"];
  c.slurm_conf = kv["slurm_conf"];
  c.storage_root = kv["storage_root"];
  c.ssh_port = std::atoi(kv["ssh_port"].c_str());
  std::stringstream nodes(kv["nodes"]);
  for (std::string n; std::getline(nodes, n, ',');) {
    if (!n.empty()) c.nodes.push_back(n);
  }
  if (c.name.empty() || c.ssh_port <= 0 || c.nodes.empty() || c.slurm_conf.empty()) {
    return std::nullopt;
  }
  return c;
}

std::string describe(const std::vector<std::string>& argv, const LabCommand& r) {
  std::string what = "`" + join(argv) + "` ";
  if (r.timed_out) {
    what += "did not finish in time";
  } else if (r.exit_code < 0) {
    what += "was killed by a signal";
  } else {
    what += "exited with " + std::to_string(r.exit_code);
  }
  return what + "\n--- stdout ---\n" + r.out + "\n--- stderr ---\n" + r.err;
}

// "PID STARTTIME" of a process (STARTTIME: field 22 of /proc/PID/stat, so a reused PID does not
// pass for the process), or "" when there is no such process or only its zombie.
std::string process_identity(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto paren = stat.rfind(") ");
  if (paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z') return "";
  std::stringstream fields(stat.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  return std::to_string(pid) + " " + field;
}

const char* const kOwnerFile = "/.owner";  // in a lab dir: process_identity() of its test

// Labs whose test process died without tearing them down (killed at ctest's timeout, crashed)
// are stopped and removed, so daemons do not pile up on a machine that runs the tests often.
// Labs without an owner file (made by hand, or kept with ORCH_LAB_KEEP) are left alone.
void reap_orphaned_labs() {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/tmp", ec)) {
    const std::string dir = entry.path().string();
    if (entry.path().filename().string().rfind("orch-lab-", 0) != 0) continue;
    std::ifstream in(dir + kOwnerFile);
    pid_t pid = 0;
    if (!(in >> pid) || pid <= 0) continue;
    std::string owner;
    std::getline(in, owner);
    owner = std::to_string(pid) + owner;
    if (process_identity(pid) == owner) continue;
    std::cerr << "SlurmLab: stopping the lab in " << dir << ": its test process " << pid
              << " is gone\n";
    run_lab_command({"/bin/bash", kScripts + "/down.sh", dir, "--purge"}, {},
                    std::chrono::seconds(60));
    fs::remove_all(dir, ec);
  }
}

}  // namespace

LabCommand run_lab_command(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env, milliseconds timeout,
                           const std::string& input, const std::string& cwd) {
  LabCommand result;
  if (argv.empty()) {
    result.err = "no command";
    return result;
  }
  int out[2], err[2], in[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || pipe2(in, O_CLOEXEC) != 0) {
    result.err = std::string("pipe2: ") + std::strerror(errno);
    return result;
  }
  // The environment: ours, with `env` replacing or adding variables.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string var = *e;
    std::string name = var.substr(0, var.find('='));
    bool replaced = false;
    for (const auto& x : env) replaced = replaced || x.substr(0, x.find('=')) == name;
    if (!replaced) env_strings.push_back(var);
  }
  env_strings.insert(env_strings.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  args[0] = find_program(argv[0]);
  std::vector<char*> argp;
  for (auto& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // its own group, killed as one
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0].c_str(), &actions, &attr, argp.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    close(err[0]);
    result.err = "cannot run " + args[0] + ": " + std::strerror(rc);
    return result;
  }

  const auto deadline = Clock::now() + timeout;
  std::size_t written = 0;
  int in_fd = in[1];
  if (input.empty()) {
    close(in_fd);
    in_fd = -1;
  } else {
    fcntl(in_fd, F_SETFL, fcntl(in_fd, F_GETFL) | O_NONBLOCK);
  }
  int fds[2] = {out[0], err[0]};
  std::string* into[2] = {&result.out, &result.err};
  bool exited = false;
  int status = 0;
  std::optional<Clock::time_point> drain_until;  // after exit: what is still in the pipes
  char buf[8192];
  for (;;) {
    pollfd p[3];
    int n = 0;
    int which[3];
    for (int i = 0; i < 2; ++i) {
      if (fds[i] >= 0) {
        p[n] = {fds[i], POLLIN, 0};
        which[n++] = i;
      }
    }
    if (in_fd >= 0) {
      p[n] = {in_fd, POLLOUT, 0};
      which[n++] = 2;
    }
    if (n == 0 && exited) break;
    int ready = poll(n ? p : nullptr, static_cast<nfds_t>(n),
                     std::min(remaining_ms(deadline), n ? 100 : 10));
    for (int k = 0; ready > 0 && k < n; ++k) {
      if (p[k].revents == 0) continue;
      if (which[k] == 2) {
        ssize_t w = write(in_fd, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<std::size_t>(w);
        if (w < 0 && errno != EAGAIN && errno != EINTR) written = input.size();
        if (written >= input.size()) {
          close(in_fd);
          in_fd = -1;
        }
        continue;
      }
      int i = which[k];
      ssize_t r = read(fds[i], buf, sizeof buf);
      if (r > 0) {
        into[i]->append(buf, static_cast<std::size_t>(r));
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(fds[i]);
        fds[i] = -1;
      }
    }
    if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      // A daemon the command started may hold the pipes open: read what is there, not forever.
      drain_until = Clock::now() + milliseconds(500);
    }
    if (drain_until && Clock::now() >= *drain_until) break;
    if (!exited && Clock::now() >= deadline) {
      result.timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
  }
  for (int fd : {fds[0], fds[1], in_fd}) {
    if (fd >= 0) close(fd);
  }
  if (!exited) {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (!result.timed_out && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

Result<std::unique_ptr<SlurmLab>> SlurmLab::start(std::vector<std::string> names,
                                                  int nodes_per_cluster, int slurmd_timeout_s) {
  if (names.empty()) return make_error(ErrorKind::invalid, "a lab needs at least one cluster");
  if (nodes_per_cluster < 1 || nodes_per_cluster > 8) {
    return make_error(ErrorKind::invalid, "nodes_per_cluster must be 1..8");
  }
  if (slurmd_timeout_s < 0) return make_error(ErrorKind::invalid, "slurmd_timeout_s must be >= 0");
  char tmpl[] = "/tmp/orch-lab-XXXXXX";
  if (!mkdtemp(tmpl)) {
    return make_error(ErrorKind::io, std::string("mkdtemp: ") + std::strerror(errno));
  }
  std::unique_ptr<SlurmLab> lab(new SlurmLab(tmpl));
  chmod(lab->dir_.c_str(), 0755);
  {
    std::ofstream owner(lab->dir_ + kOwnerFile);
    owner << process_identity(getpid()) << "\n";
  }
  reap_orphaned_labs();

  std::random_device seed;
  std::mt19937 rng(seed());
  std::vector<std::string> argv = {"/bin/bash", kScripts + "/up.sh", lab->dir_};
  argv.insert(argv.end(), names.begin(), names.end());
  std::string failure;
  for (int attempt = 1; attempt <= 4; ++attempt) {
    auto ports = pick_ports(static_cast<int>(names.size()), nodes_per_cluster, rng);
    if (!ports) return ports.error();
    std::vector<std::string> env = {"LAB_SSH_PORT_BASE=" + std::to_string(ports->ssh),
                                    "LAB_SLURM_PORT_BASE=" + std::to_string(ports->slurm),
                                    "LAB_NODES=" + std::to_string(nodes_per_cluster),
                                    // pyxis's srun options, recorded (testkit/pyxis_standin).
                                    "LAB_SPANK_PLUGINS=" ORCH_PYXIS_STANDIN " record_dir=@RECORDS@"};
    if (slurmd_timeout_s > 0) {
      env.push_back("LAB_SLURMD_TIMEOUT=" + std::to_string(slurmd_timeout_s));
    }
    LabCommand up = run_lab_command(argv, env, std::chrono::seconds(180));
    if (up.exit_code == 0) {
      std::stringstream lines(up.out);
      for (std::string line; std::getline(lines, line);) {
        if (auto c = parse_cluster_line(line)) lab->clusters_.push_back(std::move(*c));
      }
      for (const auto& name : names) {
        bool found = false;
        for (const auto& c : lab->clusters_) found = found || c.name == name;
        if (!found) {
          return make_error(ErrorKind::internal, "up.sh reported no usable CLUSTER line for " +
                                                     name + ":\n" + describe(argv, up));
        }
      }
      return lab;
    }
    failure = describe(argv, up);
    // Whatever half came up goes, with its state, before another try or the error.
    run_lab_command({"/bin/bash", kScripts + "/down.sh", lab->dir_, "--purge"}, {},
                    std::chrono::seconds(60));
    if (up.exit_code != kPortClash) break;
  }
  return make_error(ErrorKind::internal, "the Slurm lab did not come up: " + failure);
}

SlurmLab::~SlurmLab() {
  const char* keep = std::getenv("ORCH_LAB_KEEP");
  if (keep && *keep && std::string(keep) != "0") {
    std::error_code ec;
    fs::remove(dir_ + kOwnerFile, ec);  // not an orphan to reap
    std::cerr << "ORCH_LAB_KEEP: the Slurm lab in " << dir_ << " keeps running; stop it with "
              << kScripts << "/down.sh " << dir_ << " --purge\n";
    return;
  }
  if (!down_) {
    auto r = down();
    if (!r) std::cerr << "SlurmLab: " << r.error().message << "\n";
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

Result<void> SlurmLab::down() {
  std::vector<std::string> argv = {"/bin/bash", kScripts + "/down.sh", dir_, "--purge"};
  LabCommand r = run_lab_command(argv, {}, std::chrono::seconds(60));
  if (r.exit_code != 0) return make_error(ErrorKind::internal, describe(argv, r));
  down_ = true;
  return Ok{};
}

const LabCluster& SlurmLab::cluster(const std::string& name) const {
  for (const auto& c : clusters_) {
    if (c.name == name) return c;
  }
  throw std::out_of_range("the Slurm lab has no cluster " + name);
}

ClusterSpec SlurmLab::cluster_spec(const std::string& name) const {
  const LabCluster& c = cluster(name);
  ClusterSpec spec;
  spec.name = c.name;
  spec.provider = "slurm";
  spec.nodes = static_cast<int>(c.nodes.size());
  spec.gpus_per_node = 8;
  spec.accelerator = "cpu-slot";
  spec.peak_tflops = 0.001;
  spec.storage_root = c.storage_root;
  spec.poll_interval_ms = 200;
  spec.unreachable_grace_s = 5;
  spec.ssh.host = c.host;
  spec.ssh.port = c.ssh_port;
  spec.ssh.user = c.user;
  spec.ssh.key_file = c.key_file;
  spec.ssh.known_hosts = c.known_hosts;
  return spec;
}

Result<std::string> SlurmLab::slurm(const std::string& name,
                                    const std::vector<std::string>& argv) const {
  LabCommand r = run_lab_command(argv, {"SLURM_CONF=" + cluster(name).slurm_conf},
                                 std::chrono::seconds(30), "", dir_);
  if (r.exit_code != 0) {
    return make_error(r.timed_out ? ErrorKind::unreachable : ErrorKind::io,
                      "on cluster " + name + ": " + describe(argv, r));
  }
  return r.out;
}

Result<std::string> SlurmLab::node_state(const std::string& name, const std::string& node) const {
  auto out = slurm(name, {"scontrol", "show", "node", "-o", node});
  if (!out) return out.error();
  std::stringstream ss(*out);
  for (std::string word; ss >> word;) {
    if (word.rfind("State=", 0) == 0) return word.substr(6);
  }
  return make_error(ErrorKind::internal, "no State= in: " + *out);
}

std::vector<std::string> SlurmLab::ssh_argv(const std::string& name,
                                            const std::string& command) const {
  const LabCluster& c = cluster(name);
  return {"ssh",
          "-F",
          "/dev/null",
          "-i",
          c.key_file,
          "-o",
          "IdentitiesOnly=yes",
          "-o",
          "BatchMode=yes",
          "-o",
          "StrictHostKeyChecking=yes",
          "-o",
          "UserKnownHostsFile=" + c.known_hosts,
          "-o",
          "ConnectTimeout=10",
          "-p",
          std::to_string(c.ssh_port),
          c.user + "@" + c.host,
          command};
}

LabCommand SlurmLab::ssh(const std::string& name, const std::string& command,
                         const std::string& input) const {
  return run_lab_command(ssh_argv(name, command), {}, std::chrono::seconds(60), input);
}

Result<std::string> SlurmLab::ctl(const std::string& name,
                                  const std::vector<std::string>& args) const {
  cluster(name);  // throws for an unknown cluster
  std::vector<std::string> argv = {"/bin/bash", kScripts + "/ctl.sh", dir_, name};
  argv.insert(argv.end(), args.begin(), args.end());
  LabCommand r = run_lab_command(argv, {}, std::chrono::seconds(60));
  if (r.exit_code != 0) return make_error(ErrorKind::internal, describe(argv, r));
  return r.out;
}

namespace {
Result<void> done(const Result<std::string>& r) {
  if (!r) return r.error();
  return Ok{};
}
}  // namespace

Result<void> SlurmLab::kill_node(const std::string& name, const std::string& node) {
  return done(ctl(name, {"kill-node", node}));
}

Result<void> SlurmLab::restart_node(const std::string& name, const std::string& node) {
  return done(ctl(name, {"restart-node", node}));
}

Result<void> SlurmLab::set_node_down(const std::string& name, const std::string& node,
                                     const std::string& reason) {
  return done(ctl(name, {"set-node-down", node, reason}));
}

Result<void> SlurmLab::resume_node(const std::string& name, const std::string& node) {
  return done(ctl(name, {"resume-node", node}));
}

Result<void> SlurmLab::stop_login(const std::string& name) {
  return done(ctl(name, {"stop-login"}));
}

Result<void> SlurmLab::start_login(const std::string& name) {
  return done(ctl(name, {"start-login"}));
}

Result<void> SlurmLab::pause_login(const std::string& name) {
  return done(ctl(name, {"pause-login"}));
}

Result<void> SlurmLab::resume_login(const std::string& name) {
  return done(ctl(name, {"resume-login"}));
}

Result<std::string> SlurmLab::change_host_key(const std::string& name) {
  auto out = ctl(name, {"change-host-key"});
  if (!out) return out.error();
  std::string fp = *out;
  while (!fp.empty() && (fp.back() == '\n' || fp.back() == ' ')) fp.pop_back();
  return fp;
}

Result<void> SlurmLab::renice_node(const std::string& name, const std::string& node, int nice) {
  return done(ctl(name, {"renice-node", node, std::to_string(nice)}));
}

Result<void> SlurmLab::start_cpu_hog(int seconds, int count) {
  if (clusters_.empty()) return make_error(ErrorKind::invalid, "the lab has no cluster");
  std::vector<std::string> args = {"hog", std::to_string(seconds)};
  if (count > 0) args.push_back(std::to_string(count));
  return done(ctl(clusters_.front().name, args));
}

Result<void> SlurmLab::stop_cpu_hog() {
  if (clusters_.empty()) return Ok{};
  return done(ctl(clusters_.front().name, {"stop-hog"}));
}

}  // namespace orch::test
