// SlurmSite::observe_many on a real lab cluster (label slurm): ten attempts (eight running, two
// pending behind them for GPUs), one that failed, one that completed and a token Slurm never
// saw. One poll round through observe_many answers exactly what observe() answers token by
// token, with one squeue instead of one per token. The counts are printed (and recorded as test
// properties) as the measured figure of remote commands per poll round.

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "adapters/slurm/slurm_site.h"
#include "testkit/slurm_lab.h"

namespace orch::test {
namespace {

using Clock = std::chrono::steady_clock;

std::string describe(const Result<RunObservation>& r) {
  if (!r)
    return "error " + std::to_string(static_cast<int>(r.error().kind)) + ": " + r.error().message;
  std::ostringstream out;
  out << "phase " << static_cast<int>(r->phase) << " id " << r->site_job_id;
  if (r->exit) {
    out << " exit " << r->exit->exit_code.value_or(-1) << "/" << r->exit->signal.value_or(-1)
        << " [" << r->exit->detail << "]" << (r->exit->node_lost ? " node_lost" : "") << " cause "
        << (r->exit->cause ? static_cast<int>(*r->exit->cause) : -1);
  }
  for (const auto& n : r->nodes) out << " node " << n;
  for (const auto& l : r->new_lines) out << " line [" << l << "]";
  out << " next " << r->next_offset;
  return out.str();
}

std::string counts(const SlurmSite::RemoteCalls& before, const SlurmSite::RemoteCalls& after) {
  std::ostringstream out;
  for (const auto& [program, n] : after.commands) {
    auto it = before.commands.find(program);
    std::uint64_t d = n - (it == before.commands.end() ? 0 : it->second);
    if (d) out << program << " " << d << ", ";
  }
  out << "SFTP reads " << after.file_reads - before.file_reads;
  return out.str();
}

std::uint64_t delta(const SlurmSite::RemoteCalls& before, const SlurmSite::RemoteCalls& after,
                    const std::string& program) {
  auto a = after.commands.find(program);
  auto b = before.commands.find(program);
  return (a == after.commands.end() ? 0 : a->second) - (b == before.commands.end() ? 0 : b->second);
}

TEST(SlurmPollLab, OneSqueuePerRoundAndTheSameObservationsAsOneByOne) {
  auto started = SlurmLab::start({"alpha"});
  ASSERT_TRUE(started.ok()) << started.error().message;
  std::unique_ptr<SlurmLab> lab = std::move(*started);
  ClusterSpec spec = lab->cluster_spec("alpha");
  spec.ssh.connect_timeout_s = 5;
  spec.ssh.command_timeout_s = 30;
  SlurmSite site(spec, std::make_unique<SshSession>(spec.name, spec.ssh));

  // Ten sleepers with one GPU each on a node of eight: eight run, two wait. Before them a job
  // that fails and one that completes (launched first: they need a GPU too); one token is never
  // launched.
  const std::string stamp = std::to_string(
      std::chrono::duration_cast<std::chrono::seconds>(Clock::now().time_since_epoch()).count());
  auto launch = [&](const std::string& token, const std::string& command) {
    LaunchRequest r;
    r.token = token;
    r.job_id = 1;
    r.attempt_no = 1;
    r.job_name = "poll round";
    r.command = command;
    r.gpus_per_node = 1;
    auto launched = site.launch(r);
    ASSERT_TRUE(launched.ok()) << token << ": " << launched.error().message;
  };
  std::vector<std::string> tokens;
  for (int i = 0; i < 13; ++i) tokens.push_back("orch-" + std::to_string(i + 1) + "-1-" + stamp);
  ASSERT_NO_FATAL_FAILURE(launch(tokens[10], "echo failing; exit 3"));
  ASSERT_NO_FATAL_FAILURE(launch(tokens[11], "echo done"));
  for (int i = 0; i < 2; ++i) {
    const auto until = Clock::now() + std::chrono::seconds(60);
    while (site.observe(tokens[10 + i], 0).value().phase != RunPhase::exited) {
      ASSERT_LT(Clock::now(), until) << tokens[10 + i] << " did not end";
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  }
  for (int i = 0; i < 10; ++i) {
    ASSERT_NO_FATAL_FAILURE(launch(tokens[i], "echo started " + std::to_string(i) + "; sleep 300"));
  }

  std::vector<ObserveRequest> requests;
  for (const auto& t : tokens) requests.push_back(ObserveRequest{t, 0});

  // Wait until Slurm has settled: eight running (with their first line), two pending, two ended.
  const auto deadline = Clock::now() + std::chrono::seconds(90);
  std::vector<Result<RunObservation>> round;
  for (;;) {
    round = site.observe_many(requests);
    int running = 0, queued = 0, exited = 0;
    for (const auto& o : round) {
      if (!o) continue;
      if (o->phase == RunPhase::running && !o->new_lines.empty()) ++running;
      if (o->phase == RunPhase::queued) ++queued;
      if (o->phase == RunPhase::exited) ++exited;
    }
    if (running == 8 && queued == 2 && exited == 2) break;
    ASSERT_LT(Clock::now(), deadline) << "Slurm did not settle: " << running << " running, "
                                      << queued << " queued, " << exited << " exited";
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }

  // Before: observe() for each token. After: one observe_many.
  SlurmSite::RemoteCalls c0 = site.remote_calls();
  std::vector<Result<RunObservation>> one_by_one;
  for (const auto& r : requests) one_by_one.push_back(site.observe(r.token, r.output_offset));
  SlurmSite::RemoteCalls c1 = site.remote_calls();
  std::vector<Result<RunObservation>> batched = site.observe_many(requests);
  SlurmSite::RemoteCalls c2 = site.remote_calls();

  ASSERT_EQ(batched.size(), one_by_one.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    SCOPED_TRACE(tokens[i]);
    EXPECT_EQ(describe(batched[i]), describe(one_by_one[i]));
  }
  ASSERT_TRUE(batched[10].ok());
  ASSERT_TRUE(batched[10]->exit.has_value());
  EXPECT_EQ(batched[10]->exit->exit_code, 3);
  ASSERT_TRUE(batched[12].ok());
  EXPECT_EQ(batched[12]->phase, RunPhase::unknown);

  std::cout << "13 attempts (8 running, 2 pending, 2 ended, 1 never launched), one poll round:\n"
            << "  observe() per attempt: " << counts(c0, c1) << "\n"
            << "  observe_many:          " << counts(c1, c2) << "\n";
  ::testing::Test::RecordProperty("one_by_one", counts(c0, c1));
  ::testing::Test::RecordProperty("batched", counts(c1, c2));
  EXPECT_EQ(delta(c0, c1, "squeue"), 13u);
  EXPECT_EQ(delta(c1, c2, "squeue"), 1u);
  // scontrol only for the two ended jobs, either way; sacct never (no accounting here, known).
  EXPECT_EQ(delta(c0, c1, "scontrol"), 2u);
  EXPECT_EQ(delta(c1, c2, "scontrol"), 2u);
  EXPECT_EQ(c2.commands_total() - c1.commands_total(), 3u);

  // Ten running attempts alone (what a busy site polls each round): 1 squeue instead of 10.
  std::vector<ObserveRequest> ten(requests.begin(), requests.begin() + 10);
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
  };
  SlurmSite::RemoteCalls c3 = site.remote_calls();
  auto t3 = Clock::now();
  for (const auto& r : ten) ASSERT_TRUE(site.observe(r.token, r.output_offset).ok());
  auto single_ms = ms_since(t3);
  SlurmSite::RemoteCalls c4 = site.remote_calls();
  auto t4 = Clock::now();
  auto ten_batched = site.observe_many(ten);
  auto batched_ms = ms_since(t4);
  SlurmSite::RemoteCalls c5 = site.remote_calls();
  std::cout << "10 live attempts (8 running, 2 pending), one poll round:\n"
            << "  observe() per attempt: " << counts(c3, c4) << " (" << single_ms << " ms)\n"
            << "  observe_many:          " << counts(c4, c5) << " (" << batched_ms << " ms)\n";
  EXPECT_EQ(c4.commands_total() - c3.commands_total(), 10u);
  EXPECT_EQ(c5.commands_total() - c4.commands_total(), 1u);
  // The output is still read per running attempt (SFTP, not a command).
  EXPECT_EQ(c5.file_reads - c4.file_reads, 8u);

  for (const auto& t : tokens) (void)site.cancel(t);
}

}  // namespace
}  // namespace orch::test
