#pragma once
// What the Slurm adapter's script tests share: running a command (no shell in between) and
// reading its stdout, and a temporary directory removed at the end of the test.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace orch::slurm {

struct Outcome {
  int status = -1;
  pid_t pid = 0;
  std::string out;
};

// Runs argv (no shell in between) with extra environment variables; returns its stdout.
inline Outcome run(const std::vector<std::string>& argv,
                   const std::vector<std::pair<std::string, std::string>>& env = {}) {
  Outcome r;
  int pipefd[2];
  if (pipe(pipefd) != 0) return r;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipefd[1], STDOUT_FILENO);
    close(pipefd[0]);
    close(pipefd[1]);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  r.pid = pid;
  close(pipefd[1]);
  char buf[4096];
  for (ssize_t n; (n = read(pipefd[0], buf, sizeof buf)) > 0;) {
    r.out.append(buf, static_cast<std::size_t>(n));
  }
  close(pipefd[0]);
  waitpid(pid, &r.status, 0);
  return r;
}

// Ends every process whose command line mentions `text` (a test's own temporary directory),
// with the process group it leads, if any: the agent makes a group of its own, so a test that
// kills only the group it started would leave a task behind, holding ctest's pipe.
inline void kill_processes_mentioning(const std::string& text) {
  if (text.empty()) return;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::atoi(name.c_str()));
    if (pid == getpid()) continue;
    std::FILE* f = std::fopen((entry.path() / "cmdline").c_str(), "rb");
    if (f == nullptr) continue;
    std::string cmdline;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) cmdline.append(buf, n);
    std::fclose(f);
    if (cmdline.find(text) == std::string::npos) continue;
    if (getpgid(pid) == pid) kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
}

// A fresh directory under the system's temporary directory, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "orch-slurm-XXXXXX").string();
    char* made = mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr) << "mkdtemp: " << errno;
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace orch::slurm
