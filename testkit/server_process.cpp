#include "testkit/server_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "testkit/job_user.h"
#include "web/http/http_client.h"

namespace orch::e2e {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

int remaining_ms(SteadyClock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

// Decodes a waitpid status the way a shell does: the exit code, or 128 + signal.
int shell_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// In the child after fork: only async-signal-safe calls, then exec; 127 if exec fails.
[[noreturn]] void exec_child(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  _exit(127);
}

// Starts argv with stdin from /dev/null and stdout/stderr on the given descriptors.
pid_t spawn(const std::vector<std::string>& argv, int out_fd, int err_fd) {
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    exec_child(argv);
  }
  return pid;
}

enum class Read { data, eof, timeout };

// Appends what fd has to `into`, waiting until the deadline at most.
Read read_until(int fd, SteadyClock::time_point deadline, std::string& into) {
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    int ready = poll(&p, 1, remaining_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return Read::timeout;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Read::eof;
    into.append(buf, static_cast<std::size_t>(n));
    return Read::data;
  }
}

}  // namespace

TempDir::TempDir() {
  char tmpl[] = "/tmp/orch-e2e-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
  // A server's state directory lies in it: as root, the jobs' user must search through.
  testkit::open_to_jobs(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ProcessResult run_process(const std::vector<std::string>& argv, milliseconds timeout) {
  ProcessResult result;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  pid_t pid = spawn(argv, fds[1], fds[1]);
  close(fds[1]);
  const auto deadline = SteadyClock::now() + timeout;
  for (Read r = Read::data; r == Read::data;) {
    r = read_until(fds[0], deadline, result.output);
    result.timed_out = r == Read::timeout;
  }
  close(fds[0]);
  if (result.timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && !result.timed_out) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

std::unique_ptr<ServerProcess> ServerProcess::start(const std::string& config,
                                                    const std::string& state,
                                                    const std::string& log_path, std::string& error,
                                                    milliseconds timeout, bool record_url,
                                                    int port) {
  std::vector<std::string> argv = {
      ORCH_BIN_DIR "/orchestrate", "serve", "--config", config, "--state", state, "--port",
      std::to_string(port)};
  if (!record_url) argv.push_back("--no-record");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error("cannot open " + log_path);
  pid_t pid = spawn(argv, fds[1], log_fd);
  close(fds[1]);
  close(log_fd);
  std::unique_ptr<ServerProcess> server(new ServerProcess(pid, fds[0]));

  const auto deadline = SteadyClock::now() + timeout;
  std::string out;
  bool closed = false;
  while (server->url_.empty()) {
    Read r = read_until(fds[0], deadline, out);
    if (r == Read::timeout) {
      error = "no \"serving\" line within " + std::to_string(timeout.count()) + " ms";
      break;
    }
    if (r == Read::eof) {
      error = "the server closed its stdout before announcing its URL";
      closed = true;
      break;
    }
    // "orchestrate: serving N cluster(s) on http[s]://127.0.0.1:PORT with state in DIR"
    auto serving = out.find("serving ");
    auto nl = serving == std::string::npos ? serving : out.find('\n', serving);
    if (nl == std::string::npos) continue;
    auto at = out.find("://", serving);
    if (at != std::string::npos) at = out.rfind(' ', at) + 1;
    if (at == std::string::npos || at > nl) {
      error = "unexpected serving line: " + out;
      break;
    }
    server->url_ = out.substr(at, out.find(' ', at) - at);
  }
  if (!server->url_.empty()) {
    // The admin token the server made on its first start: every call() to it sends it.
    std::string token = read_file(state + "/admin.token");
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
    server->admin_token_ = token;
    if (!token.empty()) remember_token(server->url_, token);
    return server;
  }
  // A server that closed its stdout is ending: how it ended tells a refusal (its message is in
  // the log) from a crash (128 + signal) and from a binary that could not run (127: it was
  // missing or being relinked).
  if (closed && server->wait_exit(milliseconds(5000))) {
    error += " (it ended with status " + std::to_string(*server->status_) + ")";
  }
  server->kill9();
  error += "\nstdout: " + out + "\nstderr: " + read_file(log_path);
  return nullptr;
}

ServerProcess::~ServerProcess() {
  if (alive()) kill9();
  if (out_fd_ >= 0) close(out_fd_);
}

bool ServerProcess::alive() {
  if (status_) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) status_ = shell_status(status);
  return !status_;
}

bool ServerProcess::wait_exit(milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (alive()) {
    if (SteadyClock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

int ServerProcess::stop(milliseconds timeout) {
  if (alive()) {
    kill(pid_, SIGTERM);
    if (!wait_exit(timeout)) kill9();
  }
  return *status_;
}

void ServerProcess::kill9() {
  if (!alive()) return;
  kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  status_ = shell_status(status);
}

namespace {
// What each server URL is called with: its admin token, and for https the CA that signed it.
struct Remembered {
  std::string token;
  std::string ca_file;
};
std::mutex remembered_mu;
std::map<std::string, Remembered>& remembered() {
  static std::map<std::string, Remembered> by_url;
  return by_url;
}
Remembered remembered_for(const std::string& url) {
  std::lock_guard<std::mutex> lock(remembered_mu);
  auto it = remembered().find(url);
  return it == remembered().end() ? Remembered{} : it->second;
}
}  // namespace

void remember_token(const std::string& url, const std::string& token) {
  std::lock_guard<std::mutex> lock(remembered_mu);
  remembered()[url].token = token;
}

void remember_ca(const std::string& url, const std::string& ca_file) {
  std::lock_guard<std::mutex> lock(remembered_mu);
  remembered()[url].ca_file = ca_file;
}

std::string token_for(const std::string& url) {
  return remembered_for(url).token;
}

HttpResponse call(const std::string& url, const std::string& method, const std::string& target,
                  const std::string& body, const std::string& content_type) {
  return call_as(url, token_for(url), method, target, body, content_type);
}

HttpResponse call_as(const std::string& url, const std::string& token, const std::string& method,
                     const std::string& target, const std::string& body,
                     const std::string& content_type) {
  RequestOptions options;
  options.token = token;
  options.ca_file = remembered_for(url).ca_file;
  auto r = http_request(url, method, target, body, content_type, options);
  if (r) return *r;
  HttpResponse failed;
  failed.status = 0;
  failed.body = method + " " + target + " failed: " + r.error().message;
  return failed;
}

json get_json(const std::string& url, const std::string& target) {
  HttpResponse r = call(url, "GET", target);
  if (r.status != 200) return nullptr;
  json j = json::parse(r.body, nullptr, false);
  return j.is_discarded() ? json(nullptr) : j;
}

std::string describe_job(const std::string& url, std::int64_t id) {
  const std::string base = "/api/v1/jobs/" + std::to_string(id);
  return "\njob: " + get_json(url, base).dump() +
         "\nattempts: " + get_json(url, base + "/attempts").dump() +
         "\nevents: " + get_json(url, base + "/events").dump(1);
}

std::vector<RunDir> list_run_dirs(const std::string& state_dir) {
  std::vector<RunDir> dirs;
  std::error_code ec;
  for (const auto& site : fs::directory_iterator(state_dir + "/sites", ec)) {
    std::error_code ec2;
    for (const auto& run : fs::directory_iterator(site.path() / "runs", ec2)) {
      if (!run.is_directory()) continue;
      dirs.push_back(
          {site.path().filename().string(), run.path().filename().string(), run.path().string()});
    }
  }
  return dirs;
}

std::string describe_run_dirs(const std::string& state_dir) {
  std::string out;
  for (const auto& run : list_run_dirs(state_dir)) {
    out += "\nrun dir " + run.site + "/" + run.token + ":";
    std::error_code ec;
    for (const auto& f : fs::directory_iterator(run.path, ec)) {
      out += " " + f.path().filename().string();
    }
    out += "; agent.pid=" + read_file(run.path + "/agent.pid") +
           "; lock held=" + (agent_lock_held(run.path) ? "yes" : "no") +
           "; events.jsonl=" + read_file(run.path + "/events.jsonl");
  }
  return out.empty() ? "\nno run dirs" : out;
}

std::optional<pid_t> read_agent_pid(const std::string& run_dir) {
  std::string text = read_file(run_dir + "/agent.pid");
  char* end = nullptr;
  long pid = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || pid <= 1) return std::nullopt;
  return static_cast<pid_t>(pid);
}

bool agent_lock_held(const std::string& run_dir) {
  int fd = open((run_dir + "/agent.lock").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);  // also drops our shared lock if we got it
  return held;
}

std::string group_members(pid_t pgid) {
  std::string members;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    // /proc/PID/stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces and parens.
    std::string stat = read_file(entry.path().string() + "/stat");
    auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream rest(stat.substr(close_paren + 1));
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (!(rest >> state >> ppid >> pgrp)) continue;
    if (pgrp != pgid || state == 'Z' || state == 'X') continue;
    std::string cmdline = read_file(entry.path().string() + "/cmdline");
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    members +=
        (members.empty() ? "" : "; ") + name + " (ppid " + std::to_string(ppid) + ") " + cmdline;
  }
  return members;
}

bool group_alive(pid_t pgid) {
  return !group_members(pgid).empty();
}

void kill_leftover_jobs(const std::string& state_dir) {
  for (const auto& run : list_run_dirs(state_dir)) {
    // Task 0's agent in the run directory, a gang's other tasks in tasks/<rank>/.
    std::vector<std::string> dirs = {run.path};
    std::error_code ec;
    for (const auto& t : std::filesystem::directory_iterator(run.path + "/tasks", ec)) {
      dirs.push_back(t.path().string());
    }
    for (const auto& dir : dirs) {
      auto pid = read_agent_pid(dir);
      if (pid && group_alive(*pid)) kill(-*pid, SIGKILL);
    }
  }
}

}  // namespace orch::e2e
