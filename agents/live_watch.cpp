// See live_watch.h.
#include "agents/live_watch.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "agents/cli_values.h"
#include "agents/subprocess.h"

namespace orch::agent {
namespace {

constexpr const char* kKmsg = "/dev/kmsg";
constexpr size_t kMaxReadPerTick = 1 << 20;
constexpr size_t kMaxPartial = 64 << 10;
constexpr size_t kMaxSampleOut = 256 << 10;
constexpr std::int64_t kMaxSampleDeadlineMs = 10'000;

void note(const std::string& what) {
  std::fprintf(stderr, "orchestrate-agent: live watch: %s\n", what.c_str());
}

bool parse_period(const std::string& flag, const std::string& v, std::int64_t* out,
                  std::string* error) {
  double s = 0;
  if (!parse_seconds(v, 86'400, &s) || (s > 0 && s < 0.1)) {
    *error = flag + " wants seconds (0 for off, else at least 0.1), got '" + v + "'";
    return false;
  }
  *out = std::llround(s * 1000);
  return true;
}

// Inserts `,"key":value` before the closing brace of a one-line JSON object.
std::string with_member(const std::string& line, const char* key, const std::string& value) {
  size_t close = line.rfind('}');
  if (close == std::string::npos || value.empty()) return line;
  return line.substr(0, close) + ",\"" + key + "\":" + value + line.substr(close);
}

}  // namespace

bool is_watch_flag(const std::string& flag) {
  return flag == "--watch-s" || flag == "--kernel-log" || flag == "--nvidia-smi" ||
         flag == "--gpu-sample-s" || flag == "--fault-action";
}

bool parse_watch_flag(const std::string& flag, const std::string& v, WatchOptions* o,
                      std::string* error) {
  if (flag == "--watch-s") return parse_period(flag, v, &o->watch_ms, error);
  if (flag == "--gpu-sample-s") return parse_period(flag, v, &o->gpu_sample_ms, error);
  if (flag == "--kernel-log" || flag == "--nvidia-smi") {
    if (v.empty()) {
      *error = flag + " wants a path" + (flag == "--nvidia-smi" ? " or none" : "");
      return false;
    }
    (flag == "--kernel-log" ? o->kernel_log : o->nvidia_smi) = v;
    return true;
  }
  if (v != "record" && v != "stop") {
    *error = "--fault-action wants record or stop, got '" + v + "'";
    return false;
  }
  o->stop_on_fault = v == "stop";
  return true;
}

// ---- the kernel log -----------------------------------------------------------------------

KernelLogFollower::~KernelLogFollower() {
  if (fd_ >= 0) close(fd_);
}

bool KernelLogFollower::open(const std::string& path, std::string* error) {
  path_ = path.empty() ? kKmsg : path;
  kmsg_ = path_ == kKmsg;
  fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    // A file that is not there yet is followed from its start once it appears.
    if (!kmsg_ && errno == ENOENT) return true;
    *error = path_ + ": " + std::strerror(errno);
    return false;
  }
  if (kmsg_) {
    // Only what the kernel logs from now on: the ring buffer's past is the probe's business.
    lseek(fd_, 0, SEEK_END);
  } else {
    struct stat st {};
    if (fstat(fd_, &st) == 0) offset_ = st.st_size;
  }
  return true;
}

void KernelLogFollower::read_new(std::vector<std::string>* lines) {
  if (kmsg_) {
    read_kmsg(lines);
  } else {
    read_file(lines);
  }
}

// Each read() is one record, "prio,seq,usec,flags;message\n" and indented continuation lines.
// EAGAIN: nothing new; EPIPE: records were overwritten, the next read goes on with the oldest.
void KernelLogFollower::read_kmsg(std::vector<std::string>* lines) {
  if (fd_ < 0) return;
  char buf[8192];
  size_t total = 0;
  while (total < kMaxReadPerTick) {
    ssize_t n = read(fd_, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EPIPE)) continue;
    if (n <= 0) break;
    total += static_cast<size_t>(n);
    std::string_view rec(buf, static_cast<size_t>(n));
    size_t semi = rec.find(';');
    if (semi == std::string_view::npos) continue;
    rec.remove_prefix(semi + 1);
    lines->emplace_back(rec.substr(0, rec.find('\n')));
  }
}

void KernelLogFollower::read_file(std::vector<std::string>* lines) {
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) return;
    offset_ = 0;
  }
  struct stat st {};
  if (fstat(fd_, &st) != 0) return;
  if (st.st_size < offset_) {  // cut shorter (rotated in place): from its start again
    offset_ = 0;
    partial_.clear();
  }
  char buf[65536];
  size_t total = 0;
  while (offset_ < st.st_size && total < kMaxReadPerTick) {
    ssize_t n = pread(fd_, buf, sizeof buf, offset_);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    offset_ += n;
    total += static_cast<size_t>(n);
    partial_.append(buf, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
      lines->push_back(partial_.substr(start, nl - start));
    }
    partial_.erase(0, start);
    if (partial_.size() > kMaxPartial) partial_.clear();  // no line is that long: skip it
  }
}

// ---- the watch ----------------------------------------------------------------------------

LiveWatch::LiveWatch(WatchOptions options, std::string node, std::int64_t task_rank)
    : options_(std::move(options)), node_(std::move(node)), task_rank_(task_rank) {}

LiveWatch::~LiveWatch() {
  finish();
}

void LiveWatch::start(std::int64_t steady_ms) {
  if (options_.watch_ms <= 0) return;
  // "{node}" in the path stands for the node's name (a lab's nodes each log to a file of its own).
  std::string path = options_.kernel_log;
  for (size_t at; (at = path.find("{node}")) != std::string::npos;) path.replace(at, 6, node_);
  std::string error;
  log_open_ = log_.open(path, &error);
  if (!log_open_) note("cannot read the kernel log (" + error + "): Xid lines are not watched");
  next_log_ms_ = steady_ms + options_.watch_ms;
  if (options_.gpu_sample_ms <= 0 || options_.nvidia_smi == "none") return;
  nvidia_smi_ = options_.nvidia_smi.empty() ? find_in_path("nvidia-smi") : options_.nvidia_smi;
  if (!options_.nvidia_smi.empty() && access(nvidia_smi_.c_str(), X_OK) != 0) {
    note(nvidia_smi_ + " cannot be run (" + std::strerror(errno) + "): GPUs are not sampled");
    nvidia_smi_.clear();
  }
  // The first sample at once: it also maps PCI ids to GPU indexes for the Xid lines.
  next_sample_ms_ = steady_ms;
}

std::int64_t LiveWatch::next_due_in(std::int64_t steady_ms) const {
  if (options_.watch_ms <= 0) return -1;
  std::int64_t due = log_open_ ? next_log_ms_ : -1;
  std::int64_t sample = sampler_pid_ > 0      ? sampler_deadline_ms_
                        : nvidia_smi_.empty() ? -1
                                              : next_sample_ms_;
  if (sample >= 0) due = due < 0 ? sample : std::min(due, sample);
  return due < 0 ? -1 : std::max<std::int64_t>(0, due - steady_ms);
}

std::vector<WatchRecord> LiveWatch::on_tick(std::int64_t steady_ms, std::int64_t wall_ms,
                                            bool* stop) {
  *stop = false;
  std::optional<GpuFault> fault;
  if (options_.watch_ms <= 0) return {};
  if (sampler_pid_ > 0) fault = pump_sample(steady_ms, wall_ms);
  if (sampler_pid_ < 0 && !nvidia_smi_.empty() && steady_ms >= next_sample_ms_) {
    start_sample(steady_ms);
  }
  if (log_open_ && steady_ms >= next_log_ms_) {
    std::vector<std::string> lines;
    log_.read_new(&lines);
    for (const std::string& line : lines) {
      if (auto f = judge_.on_kernel_line(line, wall_ms)) fault = f;
    }
    next_log_ms_ = steady_ms + options_.watch_ms;
  }
  if (!fault) return {};
  fault_json_ = "{" + fault_members(*fault, node_, task_rank_) + "}";
  note(fault->detail + (options_.stop_on_fault ? ": stopping the job" : ""));
  *stop = options_.stop_on_fault;
  return {{"{\"event\":\"fault\"," + fault_json_.substr(1), true}};
}

void LiveWatch::start_sample(std::int64_t steady_ms) {
  next_sample_ms_ = steady_ms + options_.gpu_sample_ms;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  std::vector<std::string> args = watch_query_arguments();
  args.insert(args.begin(), nvidia_smi_);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int null_fd = ::open("/dev/null", O_RDWR);
    dup2(null_fd, STDIN_FILENO);
    dup2(fds[1], STDOUT_FILENO);
    dup2(null_fd, STDERR_FILENO);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return;
  }
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  sampler_pid_ = pid;
  sampler_fd_ = fds[0];
  sampler_out_.clear();
  sampler_deadline_ms_ =
      steady_ms + std::clamp<std::int64_t>(options_.gpu_sample_ms, 1'000, kMaxSampleDeadlineMs);
}

std::optional<GpuFault> LiveWatch::pump_sample(std::int64_t steady_ms, std::int64_t wall_ms) {
  char buf[8192];
  for (;;) {
    ssize_t n = read(sampler_fd_, buf, sizeof buf);
    if (n > 0) {
      if (sampler_out_.size() < kMaxSampleOut) sampler_out_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) break;  // the end: nvidia-smi is done
    if (steady_ms < sampler_deadline_ms_) return std::nullopt;  // EAGAIN: more to come
    kill(sampler_pid_, SIGKILL);
    end_sample();
    judge_.on_sample_error("nvidia-smi gave no answer within its deadline");
    return std::nullopt;
  }
  end_sample();
  auto gpus = parse_watch_sample(sampler_out_);
  if (gpus.empty()) {
    judge_.on_sample_error("nvidia-smi printed no GPU reading");
    return std::nullopt;
  }
  return judge_.on_sample(gpus, wall_ms);
}

void LiveWatch::end_sample() {
  if (sampler_fd_ >= 0) close(sampler_fd_);
  // Reaped here, or by the loop's waitpid(-1) when it came first.
  if (sampler_pid_ > 0) (void)waitpid(sampler_pid_, nullptr, WNOHANG);
  sampler_fd_ = -1;
  sampler_pid_ = -1;
}

void LiveWatch::finish() {
  if (sampler_pid_ > 0) kill(sampler_pid_, SIGKILL);
  end_sample();
  nvidia_smi_.clear();
  options_.watch_ms = 0;
}

std::string LiveWatch::decorate(const std::string& line) const {
  std::string out = line;
  if (line.rfind("{\"event\":\"heartbeat\"", 0) == 0) {
    out = with_member(out, "watch", judge_.watch_json());
  }
  if (line.rfind("{\"event\":\"fault\"", 0) != 0) out = with_member(out, "fault", fault_json_);
  return out;
}

}  // namespace orch::agent
