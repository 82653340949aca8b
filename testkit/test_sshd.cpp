#include "testkit/test_sshd.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace orch::test {
namespace {

constexpr const char* kSshd = "/usr/sbin/sshd";  // sshd re-executes itself: absolute path
constexpr const char* kKeygen = "ssh-keygen";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket: " + std::string(std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot find a free port: " + std::string(std::strerror(errno)));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Runs argv (PATH lookup, no shell) and returns stdout+stderr; throws on a non-zero exit.
std::string run_program(const std::vector<std::string>& argv) {
  int out[2];
  if (::pipe(out) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(out[1], STDERR_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string result;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) {
    result.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(argv[0] + " failed: " + result);
  }
  return result;
}

std::string current_user() {
  const passwd* pw = ::getpwuid(::geteuid());
  return pw != nullptr ? pw->pw_name : "root";
}

}  // namespace

TestSshd::TestSshd() {
  char tmpl[] = "/tmp/orch-sshd-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  host_key_ = dir_ + "/host_ed25519";
  config_ = dir_ + "/sshd_config";
  log_file_ = dir_ + "/sshd.log";
  try {
    run_keygen({"-q", "-t", "ed25519", "-N", "", "-C", "test-host", "-f", host_key_});
    host_fingerprint_ = fingerprint_of(host_key_ + ".pub");
    client_key_ = make_key("client");
    port_ = free_port();
    write_config();
    // sshd's privilege separation needs its empty directory.
    ::mkdir("/run/sshd", 0755);
    start();
  } catch (...) {
    stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw;
  }
}

TestSshd::~TestSshd() {
  stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string TestSshd::run_keygen(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {kKeygen};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv);
}

std::string TestSshd::fingerprint_of(const std::string& key_path) {
  // "256 SHA256:abc... comment (ED25519)"
  const std::string out = run_program({kKeygen, "-l", "-E", "sha256", "-f", key_path});
  std::istringstream in(out);
  std::string bits;
  std::string fp;
  in >> bits >> fp;
  if (fp.rfind("SHA256:", 0) != 0) throw std::runtime_error("unexpected ssh-keygen -l: " + out);
  return fp;
}

std::string TestSshd::make_key(const std::string& name, const std::string& passphrase,
                               bool authorize) {
  std::string path = dir_ + "/" + name;
  std::error_code ec;
  std::filesystem::remove(path, ec);
  std::filesystem::remove(path + ".pub", ec);
  run_keygen({"-q", "-t", "ed25519", "-N", passphrase, "-C", "test-" + name, "-f", path});
  if (authorize) {
    std::ofstream keys(dir_ + "/authorized_keys", std::ios::app);
    keys << public_key_line(name) << "\n";
  }
  return path;
}

std::string TestSshd::public_key_line(const std::string& name) const {
  std::string line = read_file(dir_ + "/" + name + ".pub");
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

std::string TestSshd::host_public_key() const {
  return public_key_line("host_ed25519");
}

SshSpec TestSshd::spec() const {
  SshSpec s;
  s.host = "127.0.0.1";
  s.port = port_;
  s.user = current_user();
  s.key_file = client_key_;
  s.host_key = host_fingerprint_;
  s.connect_timeout_s = 5.0;
  s.command_timeout_s = 20.0;
  return s;
}

void TestSshd::write_config() const {
  std::ofstream cfg(config_);
  cfg << "ListenAddress 127.0.0.1\n"
      << "Port " << port_ << "\n"
      << "HostKey " << host_key_ << "\n"
      << "PidFile " << dir_ << "/sshd.pid\n"
      << "AuthorizedKeysFile " << dir_ << "/authorized_keys\n"
      << "StrictModes no\n"
      << "UsePAM no\n"
      << "PermitRootLogin prohibit-password\n"
      << "PubkeyAuthentication yes\n"
      << "PasswordAuthentication no\n"
      << "KbdInteractiveAuthentication no\n"
      << "PrintMotd no\n"
      << "PrintLastLog no\n"
      << "UseDNS no\n"
      << "MaxStartups 100\n"
      << "MaxSessions 100\n"
      << "LogLevel VERBOSE\n"
      << "Subsystem sftp internal-sftp\n"
      // Sessions get dir() as HOME, so the user's shell start-up files stay out of the tests
      // (bash sources ~/.bashrc under sshd even for `bash -c`; root's may take seconds).
      << "SetEnv HOME=" << dir_ << "\n";
  if (!cfg) throw std::runtime_error("cannot write " + config_);
}

void TestSshd::start() {
  if (pid_ > 0) return;
  const auto log_start = static_cast<std::size_t>(read_file(log_file_).size());
  const int log_fd = ::open(log_file_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) throw std::runtime_error("cannot open " + log_file_);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    // Dies with the test, however the test ends (sshd -D stays this very process).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::dup2(log_fd, STDERR_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::execl(kSshd, kSshd, "-D", "-e", "-f", config_.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(log_fd);
  pid_ = pid;
  // Ready when it says so (probing the port would leave connections in its log).
  const std::string ready = "Server listening on 127.0.0.1 port " + std::to_string(port_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (true) {
    const std::string log_text = read_file(log_file_);
    if (log_text.size() > log_start && log_text.find(ready, log_start) != std::string::npos) {
      return;
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("sshd exited at start:\n" + log_text.substr(log_start));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      stop();
      throw std::runtime_error("sshd did not start listening within 10 s:\n" +
                               log_text.substr(log_start));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::vector<pid_t> TestSshd::descendants() const {
  std::vector<pid_t> result;
  if (pid_ <= 0) return result;
  std::multimap<pid_t, pid_t> children;  // parent -> child
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // /proc/<pid>/stat: "pid (comm) state ppid ...", comm may contain spaces and parentheses.
    const std::string stat = read_file(entry.path().string() + "/stat");
    const auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream in(stat.substr(close_paren + 1));
    std::string state;
    pid_t ppid = 0;
    in >> state >> ppid;
    children.emplace(ppid, static_cast<pid_t>(std::stol(name)));
  }
  std::vector<pid_t> todo = {pid_};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    auto [first, last] = children.equal_range(p);
    for (auto it = first; it != last; ++it) {
      result.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return result;
}

void TestSshd::kill_connections() {
  // The whole tree first: a process whose parent dies is re-parented out of reach.
  for (pid_t p : descendants()) ::kill(p, SIGKILL);
  // Let the listener notice its children are gone before anything connects again.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

void TestSshd::stop() {
  if (pid_ <= 0) return;
  const auto tree = descendants();
  ::kill(pid_, SIGKILL);
  for (pid_t p : tree) ::kill(p, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

void TestSshd::restart() {
  stop();
  start();
}

void TestSshd::change_host_key() {
  std::error_code ec;
  std::filesystem::remove(host_key_, ec);
  std::filesystem::remove(host_key_ + ".pub", ec);
  run_keygen({"-q", "-t", "ed25519", "-N", "", "-C", "test-host", "-f", host_key_});
  host_fingerprint_ = fingerprint_of(host_key_ + ".pub");
  restart();
}

std::string TestSshd::log() const {
  return read_file(log_file_);
}

}  // namespace orch::test
