// The ClusterPort contract (scheduler/cluster_port.h, adapters/README.md) as one typed suite
// that every provider passes: launch with progress lines read once through offsets, find, an
// idempotent launch, cancel (idempotent, also of unknown tokens), a user error, a node failure
// that is an infra cause, and the unknown token. Each provider brings up its world once per
// suite (providers.h); every test uses its own tokens.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "scheduler/cluster_port.h"
#include "scheduler/lifecycle/exit_classifier.h"
#include "scheduler/model/job_state.h"
#include "scheduler/model/progress_line.h"
#include "tests/integration/contract/providers.h"

namespace orch::contract {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kPoll = 100ms;
constexpr auto kRunningDeadline = 30s;
constexpr auto kExitDeadline = 30s;

std::string random_hex(int digits) {
  static std::mt19937_64 rng{std::random_device{}()};
  static const char* kHex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < digits; ++i) s += kHex[rng() % 16];
  return s;
}

std::string phase_name(RunPhase p) {
  switch (p) {
    case RunPhase::queued:
      return "queued";
    case RunPhase::running:
      return "running";
    case RunPhase::exited:
      return "exited";
    case RunPhase::unknown:
      return "unknown";
  }
  return "?";
}

std::string describe(const RunObservation& o) {
  std::ostringstream s;
  s << "phase " << phase_name(o.phase) << ", site_job_id '" << o.site_job_id << "'";
  if (o.exit) {
    s << ", exit {code " << (o.exit->exit_code ? std::to_string(*o.exit->exit_code) : "-")
      << ", signal " << (o.exit->signal ? std::to_string(*o.exit->signal) : "-") << ", node_lost "
      << o.exit->node_lost << ", cause "
      << (o.exit->cause ? std::string(to_string(*o.exit->cause)) : "-") << ", detail '"
      << o.exit->detail << "'}";
  }
  return s.str();
}

// Progress lines printed by the first test's job, and a job that runs until stopped.
const std::string kTwoProgressLinesThenSleep =
    R"(echo 'plain log line'; )"
    R"(echo '@orchestrate {"event":"progress","step":1,"tokens":64,"step_time_s":0.5}'; )"
    R"(echo '@orchestrate {"event":"progress","step":2,"tokens":64,"step_time_s":0.5}'; )"
    "sleep 120";
const std::string kSleep = "echo started; sleep 120";

// Gives every suite instance its name: Contract/local, Contract/slurm, Contract/kubernetes.
struct ProviderNames {
  template <class P>
  static std::string GetName(int) {
    return P::kName;
  }
};

template <class P>
class Contract : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { P::start(); }
  static void TearDownTestSuite() { P::stop(); }

  void SetUp() override {
    if (!P::start_error().empty()) GTEST_FAIL() << P::start_error();
    site_ = P::make_site();
    ASSERT_NE(site_, nullptr) << "the " << P::kName << " site could not be made";
  }

  void TearDown() override {
    for (const auto& [token, launch] : launched_) {
      if (site_) (void)site_->cancel(token);
      P::cleanup(token, launch);
    }
    for (const RunObservation& o : failed_nodes_) P::heal(o);
    site_.reset();
  }

  std::string new_token() {
    static int counter = 0;
    return "contract-" + std::to_string(++counter) + "-" + random_hex(8);
  }

  LaunchRequest request(const std::string& token, const std::string& command) {
    LaunchRequest r;
    r.token = token;
    r.job_id = 42;
    r.attempt_no = 1;
    r.job_name = "contract";
    r.command = command;
    r.nodes = 1;
    r.gpus_per_node = 1;
    return r;
  }

  // Launches and remembers the run for TearDown; fails the test (ASSERT) if the launch fails.
  void launch(const std::string& token, const std::string& command, LaunchResult* out) {
    auto r = site_->launch(request(token, command));
    ASSERT_TRUE(r.ok()) << "launch " << token << ": " << r.error().message;
    launched_.emplace_back(token, *r);
    *out = *r;
  }

  // Polls observe from `offset` (advancing it and collecting new lines) until `done` holds or
  // the deadline passes; `each_poll` runs between polls (a site worker re-sending cancel).
  // Returns the last observation; *ok says whether `done` held.
  RunObservation observe_until(const std::string& token, std::uint64_t& offset,
                               std::vector<std::string>& lines,
                               const std::function<bool(const RunObservation&)>& done,
                               Clock::duration limit, bool* ok,
                               const std::function<void()>& each_poll = {}) {
    const auto deadline = Clock::now() + limit;
    RunObservation last;
    *ok = false;
    std::string last_error;
    while (Clock::now() < deadline) {
      auto o = site_->observe(token, offset);
      if (o.ok()) {
        EXPECT_GE(o->next_offset, offset) << "observe moved the offset backwards";
        offset = o->next_offset;
        lines.insert(lines.end(), o->new_lines.begin(), o->new_lines.end());
        last = *o;
        if (done(last)) {
          *ok = true;
          return last;
        }
      } else {
        last_error = o.error().message;
      }
      if (each_poll) each_poll();
      std::this_thread::sleep_for(kPoll);
    }
    ADD_FAILURE() << "deadline passed; last observation: " << describe(last)
                  << (last_error.empty() ? "" : "; last error: " + last_error);
    return last;
  }

  RunObservation wait_running(const std::string& token, std::uint64_t& offset,
                              std::vector<std::string>& lines, bool* ok) {
    return observe_until(
        token, offset, lines,
        [](const RunObservation& o) {
          return o.phase == RunPhase::running || o.phase == RunPhase::exited;
        },
        kRunningDeadline, ok);
  }

  // Launches a sleeping command and waits until the provider reports it running.
  void launch_running(const std::string& token, LaunchResult* launched, RunObservation* running) {
    ASSERT_NO_FATAL_FAILURE(launch(token, kSleep, launched));
    std::uint64_t offset = 0;
    std::vector<std::string> lines;
    bool ok = false;
    *running = wait_running(token, offset, lines, &ok);
    ASSERT_TRUE(ok);
    ASSERT_EQ(running->phase, RunPhase::running) << describe(*running);
  }

  RunObservation wait_exited(const std::string& token, bool* ok,
                             const std::function<void()>& each_poll = {}) {
    std::uint64_t offset = 0;
    std::vector<std::string> lines;
    return observe_until(
        token, offset, lines, [](const RunObservation& o) { return o.phase == RunPhase::exited; },
        kExitDeadline, ok, each_poll);
  }

  std::unique_ptr<ClusterPort> site_;
  std::vector<std::pair<std::string, LaunchResult>> launched_;
  std::vector<RunObservation> failed_nodes_;
};

using Providers = ::testing::Types<LocalProvider, SlurmProvider, KubeProvider>;
TYPED_TEST_SUITE(Contract, Providers, ProviderNames);

// 1. Progress lines arrive exactly once through the offsets; find returns the launch.
TYPED_TEST(Contract, LaunchReportsProgressOnceAndFindFindsIt) {
  const std::string token = this->new_token();
  LaunchResult first;
  ASSERT_NO_FATAL_FAILURE(this->launch(token, kTwoProgressLinesThenSleep, &first));
  EXPECT_FALSE(first.site_job_id.empty());

  std::uint64_t offset = 0;
  std::vector<std::string> lines;
  bool ok = false;
  auto progress_steps = [&lines] {
    std::vector<std::int64_t> steps;
    for (const std::string& l : lines) {
      auto parsed = parse_progress_line(l);
      if (!parsed) continue;
      EXPECT_TRUE(parsed->ok()) << "line '" << l << "': " << parsed->error().message;
      if (!parsed->ok()) continue;
      if (const auto* p = std::get_if<ProgressReport>(&parsed->value())) steps.push_back(p->step);
    }
    return steps;
  };
  (void)this->observe_until(
      token, offset, lines,
      [&](const RunObservation& now) {
        return now.phase == RunPhase::running && progress_steps().size() >= 2;
      },
      kRunningDeadline, &ok);
  ASSERT_TRUE(ok) << "never running with both progress lines; lines so far: " << lines.size();
  EXPECT_EQ(progress_steps(), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(lines.front(), "plain log line");
  ASSERT_GT(offset, 0u);

  // Nothing more was printed: the same offset yields no line again.
  auto again = this->site_->observe(token, offset);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->new_lines.empty()) << again->new_lines.front();
  EXPECT_EQ(again->next_offset, offset);
  // From offset 0 the same lines come back (the caller owns the offset, not the site). Polled:
  // the Kubernetes site can briefly read a running pod as queued again (see test 1b).
  std::uint64_t reread_offset = 0;
  std::vector<std::string> reread;
  (void)this->observe_until(
      token, reread_offset, reread,
      [&](const RunObservation& now) {
        return now.phase == RunPhase::running && reread.size() >= lines.size();
      },
      kRunningDeadline, &ok);
  EXPECT_EQ(reread, lines);
  EXPECT_EQ(reread_offset, offset);

  auto found = this->site_->find(token);
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_TRUE(found->has_value()) << "find does not know a running launch";
  EXPECT_EQ((*found)->site_job_id, first.site_job_id);
}

// 1b. Launching a token the site already has returns that launch, adopted, never a second job
//     (adapters/README.md: "Launch is idempotent per token").
TYPED_TEST(Contract, SecondLaunchOfATokenReturnsTheFirstLaunch) {
  const std::string token = this->new_token();
  LaunchResult first;
  ASSERT_NO_FATAL_FAILURE(this->launch(token, kTwoProgressLinesThenSleep, &first));
  std::uint64_t offset = 0;
  std::vector<std::string> lines;
  bool ok = false;
  // Running, with all three lines of the job read (so a second job would show as new lines).
  (void)this->observe_until(
      token, offset, lines,
      [&lines](const RunObservation& now) {
        return now.phase == RunPhase::running && lines.size() >= 3;
      },
      kRunningDeadline, &ok);
  ASSERT_TRUE(ok);

  auto second = this->site_->launch(this->request(token, kTwoProgressLinesThenSleep));
  ASSERT_TRUE(second.ok()) << "a second launch of the same token failed: "
                           << second.error().message;
  EXPECT_FALSE(first.adopted) << "the first launch started the job";
  EXPECT_TRUE(second->adopted) << "the second launch must say it returned an existing one";
  EXPECT_EQ(second->site_job_id, first.site_job_id);
  auto jobs = TypeParam::site_jobs(token);
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  EXPECT_EQ(*jobs, 1) << "the site holds more than one job for token " << token;
  auto still = this->site_->observe(token, offset);
  ASSERT_TRUE(still.ok()) << still.error().message;
  // Still the first run. (Not asserted: that it still reads `running`. The Kubernetes site
  // can briefly answer `queued` again for a running pod while its new PodInformer's watch cache
  // lags the direct list that answered earlier; the contract does not promise monotonic phases.)
  EXPECT_NE(still->phase, RunPhase::unknown) << describe(*still);
  EXPECT_EQ(still->site_job_id, first.site_job_id) << describe(*still);
  EXPECT_TRUE(still->new_lines.empty()) << "the second launch printed again";
}

// 2. Cancel ends a running job as cancelled; cancelling again, or an unknown token, succeeds.
TYPED_TEST(Contract, CancelEndsTheRunAndIsIdempotent) {
  const std::string token = this->new_token();
  LaunchResult launched;
  RunObservation o;
  ASSERT_NO_FATAL_FAILURE(this->launch_running(token, &launched, &o));

  auto c = this->site_->cancel(token);
  ASSERT_TRUE(c.ok()) << c.error().message;
  // A site worker repeats cancel while the run lives (the contract's escalation path). A
  // provider whose cancel deletes the run (TypeParam::kCancelMayPurgeRun) may answer unknown
  // once it is gone instead of exited.
  auto last_cancel = Clock::now();
  bool ok = false;
  std::uint64_t after_offset = 0;
  std::vector<std::string> after_lines;
  o = this->observe_until(
      token, after_offset, after_lines,
      [](const RunObservation& now) {
        return now.phase == RunPhase::exited ||
               (TypeParam::kCancelMayPurgeRun && now.phase == RunPhase::unknown);
      },
      kExitDeadline, &ok,
      [&] {
        if (Clock::now() - last_cancel < 1s) return;
        last_cancel = Clock::now();
        auto again = this->site_->cancel(token);
        EXPECT_TRUE(again.ok()) << again.error().message;
      });
  ASSERT_TRUE(ok);
  if (o.phase == RunPhase::exited) {
    ASSERT_TRUE(o.exit.has_value()) << describe(o);
    EXPECT_EQ(classify_exit(*o.exit, /*cancel_requested=*/true), ExitCause::cancelled)
        << describe(o);
  } else {
    std::cout << "note: " << TypeParam::kName
              << " forgot the cancelled run before observe saw it exit (phase unknown)\n";
  }

  auto after = this->site_->cancel(token);
  EXPECT_TRUE(after.ok()) << "cancel of an exited run: " << after.error().message;
  auto unknown = this->site_->cancel(this->new_token());
  EXPECT_TRUE(unknown.ok()) << "cancel of an unknown token: " << unknown.error().message;
}

// 3. A job's own non-zero exit is reported with its code and classified as the user's error.
TYPED_TEST(Contract, NonZeroExitIsAUserError) {
  const std::string token = this->new_token();
  LaunchResult launched;
  ASSERT_NO_FATAL_FAILURE(this->launch(token, "echo failing; exit 3", &launched));
  bool ok = false;
  RunObservation o = this->wait_exited(token, &ok);
  ASSERT_TRUE(ok);
  ASSERT_TRUE(o.exit.has_value()) << describe(o);
  EXPECT_EQ(o.exit->exit_code, 3) << describe(o);
  EXPECT_FALSE(o.exit->node_lost) << describe(o);
  const ExitCause cause = classify_exit(*o.exit, /*cancel_requested=*/false);
  EXPECT_EQ(cause, ExitCause::user_error) << describe(o);
  EXPECT_FALSE(is_infra_cause(cause));
}

// 4. The run's node fails under it (whatever that means for the provider): an infra cause.
TYPED_TEST(Contract, NodeFailureIsAnInfraCause) {
  const std::string token = this->new_token();
  LaunchResult launched;
  RunObservation running;
  ASSERT_NO_FATAL_FAILURE(this->launch_running(token, &launched, &running));
  ASSERT_FALSE(running.nodes.empty()) << "a running attempt must report its nodes";

  this->failed_nodes_.push_back(running);
  auto failed = TypeParam::fail_node(launched, running);
  ASSERT_TRUE(failed.ok()) << failed.error().message;

  bool ok = false;
  RunObservation o = this->wait_exited(token, &ok);
  ASSERT_TRUE(ok);
  ASSERT_TRUE(o.exit.has_value()) << describe(o);
  const ExitCause cause = classify_exit(*o.exit, /*cancel_requested=*/false);
  EXPECT_TRUE(is_infra_cause(cause)) << "cause " << to_string(cause) << "; " << describe(o);
  if (TypeParam::kNodeLostReported) {
    EXPECT_TRUE(o.exit->node_lost) << describe(o);
    EXPECT_EQ(cause, ExitCause::node_lost) << describe(o);
  } else {
    EXPECT_EQ(cause, ExitCause::killed_by_signal) << describe(o);
  }
}

// 5. A token the site never saw: find says nullopt, observe says unknown.
TYPED_TEST(Contract, UnknownTokenIsNotFoundAndUnknown) {
  const std::string token = this->new_token();
  auto found = this->site_->find(token);
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_FALSE(found->has_value()) << "find invented " << (*found)->site_job_id;
  auto o = this->site_->observe(token, 0);
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->phase, RunPhase::unknown) << describe(*o);
  EXPECT_FALSE(o->exit.has_value()) << describe(*o);
  EXPECT_TRUE(o->new_lines.empty());
}

}  // namespace
}  // namespace orch::contract
