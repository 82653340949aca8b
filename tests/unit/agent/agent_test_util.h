#pragma once
// Shared by the agent tests: a fresh temporary directory per test, reading files, running the
// real agent binary through the shell, and a bounded wait for a condition.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace orch::testing {

inline constexpr const char* kAgentPath = ORCH_BIN_DIR "/orchestrate-agent";
inline constexpr const char* kFixtures = ORCH_SOURCE_DIR "/tests/fixtures/nvidia-smi";

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The lines of a file, each read as JSON (an event file).
template <typename Json>
std::vector<Json> json_lines(const std::string& path) {
  std::vector<Json> out;
  std::istringstream in(slurp(path));
  for (std::string line; std::getline(in, line);) out.push_back(Json::parse(line));
  return out;
}

inline std::string fixture(const std::string& name) {
  return slurp(std::string(kFixtures) + "/" + name);
}

// Polls cond every 20 ms until it holds or the limit passes.
inline bool eventually(const std::function<bool()>& cond,
                       std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "orch-agent-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // Runs `orchestrate-agent ARGS` through the shell with stdout and stderr to files in dir_;
  // returns the exit status.
  int agent(const std::string& args) { return agent_env("", args); }
  // The same with `env ENV` in front (ENV: "A=1 B=2", "-u A", ...).
  int agent_env(const std::string& env, const std::string& args) {
    std::string cmd = (env.empty() ? "" : "env " + env + " ") + std::string(kAgentPath) + " " +
                      args + " >" + dir_ + "/stdout 2>" + dir_ + "/stderr";
    int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string out() const { return slurp(dir_ + "/stdout"); }
  std::string err() const { return slurp(dir_ + "/stderr"); }

  std::string dir_;
};

}  // namespace orch::testing
