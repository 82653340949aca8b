// A poll round asks the site once for all its watched attempts (ClusterPort::observe_many: one
// squeue on Slurm), and the brain sees exactly the events it saw when every attempt was observed
// on its own. A real site worker and brain over a scripted FakeSite, stepped by hand.
#include <gmock/gmock.h>

#include <deque>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "scheduler/runtime/site_worker.h"
#include "tests/harness/brain_fixture.h"
#include "tests/harness/fake_site.h"

namespace orch::testing {
namespace {

// "orch-<job>-<attempt>-<time>" -> "orch-<job>-<attempt>": the same in two runs of a script.
std::string stable(const std::string& token) {
  return token.substr(0, token.rfind('-'));
}

// What the brain was given, in words: every field of an observation, the kind of anything else.
std::string describe(const BrainEvent& event) {
  std::ostringstream out;
  if (const auto* e = std::get_if<AttemptObserved>(&event)) {
    out << "observed " << e->cluster << " " << stable(e->token) << " phase "
        << static_cast<int>(e->phase);
    if (e->exit) {
      out << " exit " << e->exit->exit_code.value_or(-1) << "/" << e->exit->signal.value_or(-1)
          << " " << e->exit->detail << (e->exit->node_lost ? " node_lost" : "");
    }
    for (const auto& n : e->nodes) out << " node " << n;
    for (const auto& r : e->reports) out << " report " << format_progress_line(r);
    for (const auto& b : e->bad_lines) out << " bad " << b;
    for (const auto& l : e->log_tail) out << " tail " << l;
  } else if (const auto* u = std::get_if<SiteUnreachable>(&event)) {
    out << "unreachable " << u->cluster << " " << u->message;
  } else if (const auto* l = std::get_if<LaunchCompleted>(&event)) {
    out << "launched " << stable(l->token);
  } else if (const auto* c = std::get_if<CancelCompleted>(&event)) {
    out << "cancelled " << stable(c->token);
  } else if (const auto* i = std::get_if<InventoryObserved>(&event)) {
    out << "inventory " << i->cluster;
    for (const auto& n : i->inventory.nodes) out << " " << n.name << (n.healthy ? " up" : " out");
  } else {
    out << "event " << event.index();
  }
  return out.str();
}

class PollRoundTest : public BrainFixture {
 protected:
  void TearDown() override { stop_world(); }

  // A fresh store, brain, site and worker: cluster alpha with 3 nodes of 4 GPUs.
  void start_world(bool batch) {
    stop_world();
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("orch-poll-") +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() +
            (batch ? "-batch" : "-single"));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::string db = (dir_ / "state.db").string();
    store = std::move(Store::open(db).value());
    ClusterSpec alpha = make_cluster("alpha").nodes(3).gpus_per_node(4).grace_s(5);
    brain = std::make_unique<Brain>(*store, clock, std::vector<ClusterSpec>{alpha});
    ASSERT_TRUE(brain->start().ok());
    site_ = std::make_unique<FakeSite>();
    site_->batch = batch;
    site_->inventory_nodes = {{"n0", 4, true, ""}, {"n1", 4, true, ""}, {"n2", 4, true, ""}};
    worker_ = std::make_unique<SiteWorker>(alpha, *site_, std::move(StoreReader::open(db).value()),
                                           [this](BrainEvent e) { posted_.push_back(e); });
    seen_.clear();
  }
  void stop_world() {
    worker_.reset();
    site_.reset();
    brain.reset();
    store.reset();
    posted_.clear();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // One worker round, then the brain takes everything it posted (and `seen_` records it).
  void round() {
    worker_->run_once();
    while (!posted_.empty()) {
      BrainEvent e = std::move(posted_.front());
      posted_.pop_front();
      seen_.push_back(describe(e));
      handle(e);
    }
  }

  std::vector<JobId> submit_jobs(int n) {
    std::vector<JobId> ids;
    for (int i = 0; i < n; ++i) ids.push_back(submit(make_job().on({"alpha"}).backoff(0)));
    return ids;
  }

  std::string progress(int step) {
    return R"(@orchestrate {"event":"progress","step":)" + std::to_string(step) +
           R"(,"tokens":100,"step_time_s":0.5})";
  }

  // Ten attempts through launches, progress, a success, a failure, a cancel, an unreadable
  // output, a site that stops answering in the middle of a round and one that is down.
  std::vector<std::string> play_script(bool batch) {
    start_world(batch);
    std::vector<JobId> ids = submit_jobs(10);
    round();  // launches
    round();  // first observations
    std::vector<std::string> tokens;
    for (JobId id : ids) tokens.push_back(last_attempt(id).token);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      site_->print(tokens[i], "log line of attempt " + std::to_string(i));
      site_->print(tokens[i], progress(static_cast<int>(i) + 1));
    }
    round();
    site_->print(tokens[1], "Traceback: boom");
    site_->exit(tokens[0], 0);
    site_->exit(tokens[1], 1);
    round();
    round();
    handle(CancelJob{ids[2]});
    round();  // the cancel is carried out
    site_->runs[tokens[2]].obs.phase = RunPhase::exited;
    site_->runs[tokens[2]].obs.exit = ExitStatus{std::nullopt, 15, "CANCELLED by 0", false};
    site_->observe_errors[tokens[4]] = make_error(ErrorKind::io, "cannot read output.log");
    site_->print(tokens[5], progress(50));
    round();
    // The site stops answering after the first attempts of a round.
    site_->observe_errors[tokens[6]] = make_error(ErrorKind::unreachable, "ssh: timeout");
    site_->print(tokens[7], progress(70));
    round();
    site_->observe_errors.erase(tokens[6]);
    round();
    site_->down = true;
    round();
    site_->down = false;
    site_->observe_errors.erase(tokens[4]);
    site_->print(tokens[9], progress(90));
    round();
    round();
    return seen_;
  }

  std::filesystem::path dir_;
  std::unique_ptr<FakeSite> site_;
  std::unique_ptr<SiteWorker> worker_;
  std::deque<BrainEvent> posted_;
  std::vector<std::string> seen_;
};

TEST_F(PollRoundTest, TenLiveAttemptsAreObservedWithOneCallPerRound) {
  start_world(true);
  std::vector<JobId> ids = submit_jobs(10);
  round();
  round();
  for (JobId id : ids) ASSERT_EQ(job(id).state, JobState::running);
  site_->observe_rounds.clear();
  for (int r = 1; r <= 5; ++r) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      site_->print(last_attempt(ids[i]).token, progress(r));
    }
    round();
  }
  // Five rounds: five calls, each naming all ten attempts; observe() never called alone.
  ASSERT_EQ(site_->observe_rounds.size(), 5u);
  for (const auto& tokens : site_->observe_rounds) EXPECT_EQ(tokens.size(), 10u);
  EXPECT_EQ(site_->observe_calls, 0);
  for (JobId id : ids) EXPECT_EQ(last_attempt(id).last_step, 5);
}

TEST_F(PollRoundTest, TheDefaultAsksEachAttemptAlone) {
  start_world(false);
  submit_jobs(10);
  round();
  round();
  site_->observe_rounds.clear();
  site_->observe_calls = 0;
  round();
  ASSERT_EQ(site_->observe_rounds.size(), 1u);
  EXPECT_EQ(site_->observe_calls, 10);
}

// A busy site's inventory is asked for only now and then, but every round while a node is out
// of service: a node back from repair is seen at the very next poll.
TEST_F(PollRoundTest, ANodeReturnedToServiceIsSeenAtTheNextRound) {
  start_world(true);
  site_->inventory_nodes[2].healthy = false;
  submit_jobs(1);
  round();  // the first inventory (n2 out) and the launch
  round();
  round();
  EXPECT_THAT(seen_, ::testing::Contains("inventory alpha n0 up n1 up n2 out"));
  site_->inventory_nodes[2].healthy = true;
  seen_.clear();
  round();
  EXPECT_THAT(seen_, ::testing::Contains("inventory alpha n0 up n1 up n2 up"))
      << "one round after its return";
  // All in service again: a busy site is not asked every round.
  site_->inventory_nodes[1].healthy = false;
  seen_.clear();
  for (int i = 0; i < 5; ++i) round();
  EXPECT_THAT(seen_, ::testing::Not(::testing::Contains(::testing::HasSubstr("inventory"))));
}

TEST_F(PollRoundTest, AnIdleSiteIsNotAskedToObserveNothing) {
  start_world(true);
  round();
  round();
  EXPECT_TRUE(site_->observe_rounds.empty());
}

TEST_F(PollRoundTest, TheBrainSeesTheSameEventsAsWithOneObservePerAttempt) {
  std::vector<std::string> single = play_script(false);
  int single_calls = site_->observe_calls;
  std::vector<std::string> batched = play_script(true);
  EXPECT_EQ(site_->observe_calls, 0);
  EXPECT_GT(single_calls, 50);
  EXPECT_EQ(batched, single);
  // The script did what it says: a success, a failure, a cancel, an outage mid-round.
  EXPECT_THAT(batched, ::testing::Contains(::testing::HasSubstr("exit 0/-1")));
  EXPECT_THAT(batched, ::testing::Contains(::testing::HasSubstr("tail Traceback: boom")));
  EXPECT_THAT(batched, ::testing::Contains(::testing::HasSubstr("CANCELLED by 0")));
  EXPECT_THAT(batched, ::testing::Contains("unreachable alpha ssh: timeout"));
  EXPECT_THAT(batched, ::testing::Contains("unreachable alpha fake site is down"));
}

// Issue 44: why the site holds a launched attempt back reaches the brain, which shows it as the
// job's reason until the attempt runs.
TEST_F(PollRoundTest, TheSitesReasonForWaitingBecomesTheJobsReasonUntilItRuns) {
  start_world(true);
  site_->launch_phase = RunPhase::queued;
  const JobId id = submit_jobs(1)[0];
  round();  // the launch
  const std::string token = last_attempt(id).token;
  site_->runs[token].obs.waiting = "Kueue: couldn't assign flavors to pod set main";
  round();
  EXPECT_EQ(job(id).state, JobState::placed);
  EXPECT_EQ(job(id).reason, "queued at alpha: Kueue: couldn't assign flavors to pod set main");
  site_->runs[token].obs.phase = RunPhase::running;
  round();
  EXPECT_EQ(job(id).state, JobState::running);
  EXPECT_EQ(job(id).reason, "");
}

TEST_F(PollRoundTest, ASiteSilentMidRoundKeepsWhatItAnsweredBefore) {
  start_world(true);
  std::vector<JobId> ids = submit_jobs(4);
  round();
  round();
  for (JobId id : ids) site_->print(last_attempt(id).token, progress(3));
  site_->observe_errors[last_attempt(ids[2]).token] =
      make_error(ErrorKind::unreachable, "ssh: timeout");
  round();
  // The attempts answered before the silence reached the brain, the others wait.
  EXPECT_EQ(last_attempt(ids[0]).last_step, 3);
  EXPECT_EQ(last_attempt(ids[1]).last_step, 3);
  EXPECT_NE(last_attempt(ids[3]).last_step, 3);
  EXPECT_EQ(store->cluster("alpha").value()->health, SiteHealth::unreachable);
}

}  // namespace
}  // namespace orch::testing
