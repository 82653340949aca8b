#include "bench/slurm_lab_util.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace orch::bench {

namespace {

volatile std::sig_atomic_t g_stop = 0;

// The NUL-separated environment of a live (non-zombie) process; empty when gone or unreadable.
std::vector<std::string> process_env(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  auto paren = text.rfind(") ");
  if (paren == std::string::npos || paren + 2 >= text.size() || text[paren + 2] == 'Z') return {};
  std::ifstream in("/proc/" + pid + "/environ", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> env;
  std::size_t start = 0;
  while (start < raw.size()) {
    std::size_t end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    env.push_back(raw.substr(start, end - start));
    start = end + 1;
  }
  return env;
}

// PIDs of live processes (not this one) whose environment satisfies `match`.
template <typename Match>
std::vector<pid_t> processes_where(Match match) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (!proc) return found;
  while (dirent* e = readdir(proc)) {
    std::string name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t pid = std::atoi(name.c_str());
    if (pid == getpid()) continue;
    auto env = process_env(name);
    if (!env.empty() && match(env)) found.push_back(pid);
  }
  closedir(proc);
  return found;
}

bool has(const std::vector<std::string>& env, const std::string& var) {
  return std::find(env.begin(), env.end(), var) != env.end();
}

bool has_prefix(const std::vector<std::string>& env, const std::string& prefix) {
  return std::any_of(env.begin(), env.end(),
                     [&](const std::string& v) { return v.rfind(prefix, 0) == 0; });
}

}  // namespace

void on_signal(int /*sig*/) {
  g_stop = 1;
}

bool stopping() {
  return g_stop != 0;
}

std::vector<pid_t> job_processes_on(const std::string& slurm_conf, const std::string& node) {
  return processes_where([&](const std::vector<std::string>& env) {
    return has_prefix(env, "SLURM_JOB_ID=") && has(env, "SLURMD_NODENAME=" + node) &&
           has(env, "SLURM_CONF=" + slurm_conf);
  });
}

std::size_t kill_all(const std::vector<pid_t>& pids) {
  for (pid_t p : pids) kill(p, SIGKILL);
  return pids.size();
}

LabGuard::~LabGuard() {
  if (!lab_) return;
  const std::string dir = lab_->dir();
  lab_.reset();
  auto left = processes_where([&](const std::vector<std::string>& env) {
    return has(env, "ORCH_LAB_DIR=" + dir) || has_prefix(env, "SLURM_CONF=" + dir + "/");
  });
  if (!left.empty()) {
    std::cerr << "bench_slurm: " << kill_all(left) << " process(es) of lab " << dir
              << " outlived down.sh; SIGKILLed\n";
  }
}

std::unique_ptr<LabGuard> start_lab(const std::vector<std::string>& names, int nodes_per_cluster) {
  auto t0 = SteadyClock::now();
  auto lab = test::SlurmLab::start(names, nodes_per_cluster);
  if (!lab) throw std::runtime_error("the Slurm lab did not come up: " + lab.error().message);
  std::fprintf(stderr, "  lab %s up in %.1f s\n", (*lab)->dir().c_str(), seconds_since(t0));
  return std::make_unique<LabGuard>(std::move(*lab));
}

std::string slurm_config(const test::SlurmLab& lab, const std::string& cluster,
                         const std::string& key) {
  auto out = lab.slurm(cluster, {"scontrol", "show", "config"});
  if (!out) return "?";
  std::stringstream ss(*out);
  for (std::string line; std::getline(ss, line);) {
    if (line.rfind(key + " ", 0) != 0) continue;
    auto eq = line.find("= ");
    if (eq != std::string::npos) return line.substr(eq + 2);
  }
  return "?";
}

std::optional<double> logged_after(const std::string& log, const std::string& node,
                                   const std::string& what,
                                   std::chrono::system_clock::time_point since) {
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find(node) == std::string::npos || line.find(what) == std::string::npos) continue;
    std::tm tm{};
    int ms = 0;
    if (std::sscanf(line.c_str(), "[%d-%d-%dT%d:%d:%d.%d]", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7) {
      continue;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_isdst = -1;
    const auto at =
        std::chrono::system_clock::from_time_t(std::mktime(&tm)) + std::chrono::milliseconds(ms);
    const double after = std::chrono::duration<double>(at - since).count();
    if (after >= -0.001) return after;
  }
  return std::nullopt;
}

}  // namespace orch::bench
