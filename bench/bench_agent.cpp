// What wrapping a job in `orchestrate-agent run` costs: the agent's own CPU time as a share of
// one core, its peak RSS, and the job's throughput against the same job run directly (the
// baseline). Each case runs for a fixed wall time, then gets SIGTERM (the toy trainer exits
// 143 on it; through the agent, the agent forwards it).
//
//   trainer  the toy trainer at about 10 steps/s, burning a core (a real job's shape)
//   chatty   the toy trainer with a tiny model and a 1 ms step: about 1000 progress lines/s
//   flood    the same without the delay: as many lines as the trainer can print (the relay's
//            ceiling; tens of thousands of lines/s)
//   idle     `sleep` under the agent: what the agent costs while the job is quiet
//   watch    the same with the live watch on (issue 43): a kernel-log file that receives 100
//            lines/s (every 100th an Xid that is not fatal) and a stand-in nvidia-smi of 8 GPUs,
//            at the defaults (log every 2 s, nvidia-smi every 30 s) and fast (0.1 s, 1 s)
//
// The other cases run with --watch-s 0, so they measure the relay alone.
//
//   build/bin/bench_agent [--seconds S] [--trainer-dim D]
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_util.h"

using namespace orch::bench;  // NOLINT: a benchmark's main file

namespace {

const std::string kBin = ORCH_BIN_DIR;

struct Run {
  double wall_s = 0;
  double lines_per_s = 0;      // progress lines the job printed, per second of wall time
  double agent_cpu_pct = -1;   // agent's own CPU time / wall time (one core = 100 %); -1: n/a
  double steady_cpu_pct = -1;  // the same from 1 s after the start to the SIGTERM: no start-up
  double agent_cpu_ms = -1;    // all of the agent's CPU time, start-up and shutdown included
  double agent_rss_mib = -1;   // agent's VmHWM
};

// The process's own CPU seconds: /proc/PID/schedstat (nanoseconds on the CPU) when the kernel
// has it, else utime + stime from /proc/PID/stat (clock ticks). Children are not included.
double cpu_seconds(pid_t pid) {
  std::ifstream sched("/proc/" + std::to_string(pid) + "/schedstat");
  unsigned long long ns = 0;
  if (sched >> ns) return static_cast<double>(ns) / 1e9;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  size_t close_paren = text.rfind(')');
  if (close_paren == std::string::npos) return -1;
  std::istringstream rest(text.substr(close_paren + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {  // fields 14 and 15, counted from 1
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// VmHWM (peak resident set) in MiB; -1 when unreadable (the process is gone).
double peak_rss_mib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  }
  return -1;
}

// Starts argv with stdout on a pipe we read; returns the pid and sets *out_fd.
pid_t spawn(const std::vector<std::string>& argv, int* out_fd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    // Its own process group, as the sites start the agent: the agent forwards signals to its
    // whole group, which must not include us.
    setpgid(0, 0);
    dup2(fds[1], STDOUT_FILENO);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDERR_FILENO);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  *out_fd = fds[0];
  return pid;
}

// A process appending a kernel-log line to `path` every 10 ms until killed (the watch's input).
pid_t start_log_writer(const std::string& path) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  for (long i = 0;; ++i) {
    std::string line = "[" + std::to_string(i) + ".0] ";
    line += i % 100 == 99 ? "NVRM: Xid (PCI:0000:3b:00): 13, Graphics SM Warp Exception\n"
                          : "eth0: link up, 100Gbps, full duplex, flow control rx/tx\n";
    (void)!write(fd, line.data(), line.size());
    usleep(10'000);
  }
}

// Runs argv for `seconds`, counting the progress lines on its stdout, then SIGTERMs it and
// waits. With measure_self, the spawned process is the agent and its CPU and RSS are read (the
// CPU from the zombie, before it is reaped, so none of its time is missed).
Run run_case(const std::vector<std::string>& argv, double seconds, bool measure_self) {
  Run r;
  int fd = -1;
  pid_t pid = spawn(argv, &fd);
  if (pid < 0) {
    std::perror("spawn");
    std::exit(1);
  }
  const auto t0 = SteadyClock::now();
  long long lines = 0;
  long long lines_at_stop = -1;
  double stopped_at = 0;
  std::string partial;
  char buf[65536];
  bool open_fd = true;
  constexpr double kWarmup = 1.0;
  double cpu_at_warmup = -1, warmup_at = 0;
  while (open_fd) {
    double now = seconds_since(t0);
    if (measure_self && cpu_at_warmup < 0 && now >= kWarmup && seconds > 2 * kWarmup) {
      cpu_at_warmup = cpu_seconds(pid);
      warmup_at = now;
    }
    if (lines_at_stop < 0 && now >= seconds) {
      if (measure_self) {
        r.agent_rss_mib = peak_rss_mib(pid);
        if (cpu_at_warmup >= 0) {
          r.steady_cpu_pct = 100.0 * (cpu_seconds(pid) - cpu_at_warmup) / (now - warmup_at);
        }
      }
      lines_at_stop = lines;
      stopped_at = now;
      kill(pid, SIGTERM);
    }
    pollfd p{fd, POLLIN, 0};
    double next = measure_self && cpu_at_warmup < 0 && now < kWarmup ? kWarmup : seconds;
    int timeout_ms = lines_at_stop < 0 ? static_cast<int>((next - now) * 1000) + 1 : 1000;
    if (poll(&p, 1, timeout_ms) <= 0) continue;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) {
      open_fd = n < 0 && errno == EINTR;
      continue;
    }
    // Progress lines start with the protocol prefix; count them across read boundaries.
    partial.append(buf, static_cast<size_t>(n));
    size_t start = 0, nl;
    while ((nl = partial.find('\n', start)) != std::string::npos) {
      if (partial.compare(start, 13, "@orchestrate ") == 0) ++lines;
      start = nl + 1;
    }
    partial.erase(0, start);
  }
  close(fd);
  if (lines_at_stop < 0) {  // the job ended on its own before the time was up
    lines_at_stop = lines;
    stopped_at = seconds_since(t0);
  }
  siginfo_t info{};
  waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT);
  r.wall_s = seconds_since(t0);
  if (measure_self) {
    double cpu = cpu_seconds(pid);
    if (cpu >= 0) {
      r.agent_cpu_pct = 100.0 * cpu / r.wall_s;
      r.agent_cpu_ms = cpu * 1000;
    }
  }
  waitpid(pid, nullptr, 0);
  r.lines_per_s = stopped_at > 0 ? static_cast<double>(lines_at_stop) / stopped_at : 0;
  return r;
}

// The median of each figure over runs (so one disturbed run on a shared machine does not decide).
Run median_run(const std::vector<Run>& runs) {
  auto pick = [&](double Run::*field) {
    std::vector<double> v;
    for (const Run& r : runs) v.push_back(r.*field);
    return median(v);
  };
  Run m;
  m.wall_s = pick(&Run::wall_s);
  m.lines_per_s = pick(&Run::lines_per_s);
  m.agent_cpu_pct = pick(&Run::agent_cpu_pct);
  m.steady_cpu_pct = pick(&Run::steady_cpu_pct);
  m.agent_cpu_ms = pick(&Run::agent_cpu_ms);
  m.agent_rss_mib = pick(&Run::agent_rss_mib);
  return m;
}

void print_row(const std::string& name, const Run& r, double baseline_lines_per_s) {
  char cpu[32] = "-", steady[32] = "-", ms[32] = "-", rss[32] = "-", ratio[32] = "-",
       rate[32] = "-";
  if (r.agent_cpu_pct >= 0) std::snprintf(cpu, sizeof cpu, "%.3f", r.agent_cpu_pct);
  if (r.steady_cpu_pct >= 0) std::snprintf(steady, sizeof steady, "%.3f", r.steady_cpu_pct);
  if (r.agent_cpu_ms >= 0) std::snprintf(ms, sizeof ms, "%.1f", r.agent_cpu_ms);
  if (r.agent_rss_mib >= 0) std::snprintf(rss, sizeof rss, "%.1f", r.agent_rss_mib);
  if (r.lines_per_s > 0) std::snprintf(rate, sizeof rate, "%.1f", r.lines_per_s);
  if (baseline_lines_per_s > 0) {
    std::snprintf(ratio, sizeof ratio, "%.3f", r.lines_per_s / baseline_lines_per_s);
  }
  std::printf("%-26s %6.2f %8s %9s %8s %8s %11s %8s\n", name.c_str(), r.wall_s, cpu, steady, ms,
              rss, rate, ratio);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 10;
  int trainer_dim = 512;
  int repeat = 1;
  if (auto rc = parse_flags(
          argc, argv, "bench_agent",
          "The agent's overhead: orchestrate-agent run around the toy trainer and sleep.",
          {{"--seconds", "S", "seconds each run lasts (default 10)", 0.1, 3600, false,
            [&](double v) { seconds = v; }},
           {"--repeat", "N", "runs of each case (default 1)", 1, 100, true,
            [&](double v) { repeat = static_cast<int>(v); }},
           {"--trainer-dim", "D", "the toy trainer's matrix size (default 512)", 1, 16384, true,
            [&](double v) { trainer_dim = static_cast<int>(v); }}})) {
    return *rc;
  }
  const std::string agent = kBin + "/orchestrate-agent";
  const std::string trainer = kBin + "/toy_trainer";
  for (const std::string& p : {agent, trainer}) {
    if (access(p.c_str(), X_OK) != 0) {
      std::fprintf(stderr, "bench_agent: %s is missing; build orchestrate-agent and toy_trainer\n",
                   p.c_str());
      return 1;
    }
  }
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "orch-bench-agent";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string events = (dir / "events.jsonl").string();
  // The live watch's inputs: a kernel-log file and a stand-in nvidia-smi printing 8 GPUs.
  const std::string kmsg = (dir / "kmsg.log").string();
  const std::string smi = (dir / "nvidia-smi").string();
  {
    std::ofstream out(smi);
    out << "#!/bin/sh\ncat <<'EOF'\n";
    for (int g = 0; g < 8; ++g) {
      out << g << ", 00000000:" << std::hex << (0x18 + 0x20 * g) << std::dec
          << ":00.0, 0, 41, 310.25, 0x0000000000000000\n";
    }
    out << "EOF\n";
  }
  std::filesystem::permissions(smi, std::filesystem::perms::owner_all);
  auto wrapped = [&](std::vector<std::string> job, std::vector<std::string> flags) {
    std::vector<std::string> v = {agent, "run", "--events", events};
    v.insert(v.end(), flags.begin(), flags.end());
    v.push_back("--");
    v.insert(v.end(), job.begin(), job.end());
    return v;
  };
  const std::vector<std::string> no_watch = {"--watch-s", "0"};
  auto watch = [&](const char* log_s, const char* sample_s) {
    return std::vector<std::string>{"--watch-s", log_s, "--gpu-sample-s", sample_s,
                                    "--kernel-log", kmsg, "--nvidia-smi", smi};
  };
  const std::string steps = "1000000000";
  struct Case {
    std::string name;
    std::vector<std::string> job;
    bool baseline;  // also run the job directly
    std::vector<std::string> flags;  // the agent's
    bool log_writer = false;         // a kernel-log file receiving lines meanwhile
  };
  const std::vector<std::string> trainer_job = {
      trainer, "--steps", steps, "--dim", std::to_string(trainer_dim), "--batch", "128"};
  const std::vector<Case> cases = {
      {"trainer", trainer_job, true, no_watch},
      {"chatty",
       {trainer, "--steps", steps, "--dim", "8", "--batch", "2", "--step-delay-ms", "1"},
       true,
       no_watch},
      {"flood", {trainer, "--steps", steps, "--dim", "8", "--batch", "2"}, true, no_watch},
      {"idle (sleep)", {"/bin/sleep", "3600"}, false, no_watch},
      {"watch 2s/30s, idle", {"/bin/sleep", "3600"}, false, watch("2", "30"), true},
      {"watch 0.1s/1s, idle", {"/bin/sleep", "3600"}, false, watch("0.1", "1"), true},
      {"watch 2s/30s, trainer", trainer_job, false, watch("2", "30"), true},
  };

  std::printf(
      "orchestrate-agent overhead: each run %.0f s then SIGTERM, direct and under the "
      "agent alternating, median of %d; load average %.2f on %ld CPUs\n\n",
      seconds, repeat, load_average(), sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("%-26s %6s %8s %9s %8s %8s %11s %8s\n", "case", "wall s", "agent %", "steady %",
              "CPU ms", "RSS MiB", "progress/s", "vs base");
  for (const Case& c : cases) {
    std::vector<Run> direct, under;
    for (int r = 0; r < repeat; ++r) {
      if (c.baseline) direct.push_back(run_case(c.job, seconds, false));
      const pid_t writer = c.log_writer ? start_log_writer(kmsg) : -1;
      under.push_back(run_case(wrapped(c.job, c.flags), seconds, true));
      if (writer > 0) {
        kill(writer, SIGKILL);
        waitpid(writer, nullptr, 0);
      }
    }
    double base = 0;
    if (c.baseline) {
      Run d = median_run(direct);
      base = d.lines_per_s;
      print_row(c.name + ", direct", d, base);
    }
    print_row(c.name + ", under agent", median_run(under), base);
  }

  std::ifstream ev(events);
  long long records = 0;
  std::string line;
  while (std::getline(ev, line)) ++records;
  std::printf(
      "\nagent %%: the agent's own CPU time (schedstat, else utime+stime) over the wall time, "
      "100 = one core;\nsteady %%: the same from 1 s after the start until the SIGTERM (no "
      "fork, exec and start-up);\nCPU ms: all of its CPU time; RSS MiB: its VmHWM; progress/s: "
      "the job's @orchestrate lines\nper second as read from the agent's (or the job's) stdout; "
      "vs base: against the job run directly.\nwatch A/B: the live watch reading the kernel "
      "log every A and sampling the stand-in nvidia-smi every B\n(its own CPU is not the "
      "agent's), a writer appending 100 lines/s to the log.\nEvent file after all agent runs: "
      "%lld records (progress is coalesced to one a second).\n",
      records);
  std::filesystem::remove_all(dir);
  return 0;
}
