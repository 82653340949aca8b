#pragma once
// Shared fixture for the local site tests: a fresh root per test, a site on it, a bounded poll
// loop, and cleanup that kills every process group a test started.

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "adapters/local/local_site.h"

namespace orch::testing {

inline constexpr const char* kAgentPath = ORCH_BIN_DIR "/orchestrate-agent";

// Polls cond every 20 ms for up to 10 s; true as soon as it holds.
inline bool eventually(const std::function<bool()>& cond,
                       std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class LocalSiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "orch-local-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    site_ = make_site();
  }

  void TearDown() override {
    for (int pgid : pgids_) kill(-pgid, SIGKILL);
    site_.reset();
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  std::unique_ptr<LocalSite> make_site(int nodes = 2, std::int64_t grace_ms = 10'000) {
    LocalSiteOptions o;
    o.name = "loc";
    o.root = root_;
    o.nodes = nodes;
    o.gpus_per_node = 4;
    o.agent_path = kAgentPath;
    o.cancel_grace_ms = grace_ms;
    return std::make_unique<LocalSite>(o);
  }

  static LaunchRequest request(const std::string& token, const std::string& command) {
    LaunchRequest r;
    r.token = token;
    r.job_id = 7;
    r.attempt_no = 2;
    r.job_name = "test-job";
    r.command = command;
    return r;
  }

  std::string run_dir(const std::string& token) const { return site_->run_dir(token); }

  // Launches and remembers the process group for cleanup.
  LaunchResult launch_ok(const LaunchRequest& r) {
    auto result = site_->launch(r);
    EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
    if (!result.ok()) return {};
    pgids_.push_back(std::stoi(result->site_job_id));
    return *result;
  }

  // Observes until the run has exited (or the deadline passes), collecting every output line.
  RunObservation wait_exited(const std::string& token, std::vector<std::string>* lines = nullptr) {
    RunObservation last;
    std::uint64_t offset = 0;
    eventually([&] {
      auto obs = site_->observe(token, offset);
      if (!obs.ok()) return false;
      last = *obs;
      offset = obs->next_offset;
      if (lines) lines->insert(lines->end(), obs->new_lines.begin(), obs->new_lines.end());
      return obs->phase == RunPhase::exited;
    });
    return last;
  }

  // Waits until the job's output contains needle (the job got far enough, e.g. set its trap).
  bool wait_output(const std::string& token, const std::string& needle) {
    return eventually([&] {
      auto out = site_->read_output(token, 0, 1 << 20);
      return out.ok() && out->find(needle) != std::string::npos;
    });
  }

  std::string root_;
  std::unique_ptr<LocalSite> site_;
  std::vector<int> pgids_;
};

}  // namespace orch::testing
