#pragma once
// What the Slurm lab tests of a site do with one attempt: observe it until it ends (three
// minutes at most), collecting its output lines. Polling a real site: the waits are real.

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <memory>

#include "adapters/slurm/slurm_site.h"
#include "scheduler/cluster_port.h"
#include "testkit/slurm_lab.h"

namespace orch::test {

inline RunObservation observe_until_exited(ClusterPort& site, const std::string& token,
                                           std::vector<std::string>& lines) {
  using Clock = std::chrono::steady_clock;
  RunObservation last;
  std::uint64_t offset = 0;
  for (auto deadline = Clock::now() + std::chrono::minutes(3); Clock::now() < deadline;) {
    auto obs = site.observe(token, offset);
    if (obs.ok()) {
      lines.insert(lines.end(), obs->new_lines.begin(), obs->new_lines.end());
      offset = obs->next_offset;
      last = *obs;
      if (obs->phase == RunPhase::exited) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return last;
}

// One lab cluster "alpha" of `Nodes` nodes for a whole test suite (its tests leave it as they
// found it): up once before the first test, down after the last; every test fails at once,
// saying why, when it did not come up.
template <int Nodes>
class LabPerSuiteTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto started = SlurmLab::start({"alpha"}, Nodes);
    if (!started) {
      start_error_ = new std::string(started.error().message);
      return;
    }
    lab_ = started->release();
  }
  static void TearDownTestSuite() {
    delete lab_;
    lab_ = nullptr;
    delete start_error_;
    start_error_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(lab_, nullptr) << (start_error_ ? *start_error_ : "no lab"); }

  static inline SlurmLab* lab_ = nullptr;
  static inline std::string* start_error_ = nullptr;
};

// A lab of its own per test: cluster "alpha" of `nodes` nodes, its spec (10 s to connect, 60 s
// a command) and a SlurmSite on it that ships `agent`.
class LabSiteTest : public ::testing::Test {
 protected:
  void start_lab(int nodes, const std::string& agent) {
    auto started = SlurmLab::start({"alpha"}, nodes);
    ASSERT_TRUE(started.ok()) << started.error().message;
    lab_ = std::move(*started);
    spec_ = lab_->cluster_spec("alpha");
    spec_.ssh.connect_timeout_s = 10;
    spec_.ssh.command_timeout_s = 60;
    site_ = std::make_unique<SlurmSite>(spec_, std::make_unique<SshSession>(spec_.name, spec_.ssh),
                                        SlurmSiteOptions{agent});
  }

  std::unique_ptr<SlurmLab> lab_;
  ClusterSpec spec_;
  std::unique_ptr<SlurmSite> site_;
};

}  // namespace orch::test
