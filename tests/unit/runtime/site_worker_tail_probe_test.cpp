// The site worker's log tail (the last ordinary output lines of an attempt, posted with its
// exit for the failure classifier) and its probe actions (run once per process, result posted
// as ProbeCompleted). One worker over a scripted site, stepped by hand; the brain takes every
// event but ProbeCompleted, which these tests only read.
#include <gmock/gmock.h>

#include <deque>
#include <filesystem>

#include "scheduler/model/launch_request_json.h"
#include "scheduler/runtime/site_worker.h"
#include "tests/harness/brain_fixture.h"
#include "tests/harness/fake_site.h"

namespace orch::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

class WorkerTailProbeTest : public BrainFixture {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("orch-worker-tail-") +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    db_ = (dir_ / "state.db").string();
    store = std::move(Store::open(db_).value());
    alpha_spec_ = make_cluster("alpha").grace_s(5);
    brain = std::make_unique<Brain>(*store, clock, std::vector<ClusterSpec>{alpha_spec_});
    ASSERT_TRUE(brain->start().ok());
    restart_worker();
  }
  void TearDown() override {
    worker_.reset();
    brain.reset();
    store.reset();
    std::filesystem::remove_all(dir_);
  }

  // A new worker (as after a server restart): it remembers nothing of the last one.
  void restart_worker() {
    worker_ =
        std::make_unique<SiteWorker>(alpha_spec_, alpha_, std::move(StoreReader::open(db_).value()),
                                     [this](BrainEvent e) { posted_.push_back(std::move(e)); });
  }

  // One worker round; the brain takes what it posted (but probe results, kept for the test).
  void round() {
    worker_->run_once();
    while (!posted_.empty()) {
      BrainEvent e = std::move(posted_.front());
      posted_.pop_front();
      if (auto* o = std::get_if<AttemptObserved>(&e)) observed_.push_back(*o);
      if (auto* p = std::get_if<ProbeCompleted>(&e)) {
        probes_.push_back(*p);
        continue;
      }
      handle(e);
    }
  }

  std::optional<AttemptObserved> exit_observation() {
    for (const auto& o : observed_) {
      if (o.phase == RunPhase::exited) return o;
    }
    return std::nullopt;
  }

  std::int64_t enqueue_probe(const std::string& token, std::vector<std::string> nodes) {
    ProbeRequest r;
    r.token = token;
    r.nodes = std::move(nodes);
    OutboxRow row;
    row.cluster = "alpha";
    row.kind = ActionKind::probe;
    row.token = token;
    row.payload = probe_request_to_json(r);
    row.created_ms = clock.now_ms();
    return store->enqueue(row).value();
  }

  std::filesystem::path dir_;
  std::string db_;
  ClusterSpec alpha_spec_;
  FakeSite alpha_;
  std::deque<BrainEvent> posted_;
  std::vector<AttemptObserved> observed_;
  std::vector<ProbeCompleted> probes_;
  std::unique_ptr<SiteWorker> worker_;
};

TEST_F(WorkerTailProbeTest, TheLogTailComesWithTheExitLastLinesWithoutProtocolLines) {
  JobId id = submit(make_job());
  round();
  std::string token = last_attempt(id).token;
  for (int i = 0; i < 40; ++i) {
    alpha_.print(token, "line " + std::to_string(i));
    alpha_.print(token, R"(@orchestrate {"event":"progress","step":)" + std::to_string(i) + "}");
  }
  round();
  for (int i = 40; i < 70; ++i) alpha_.print(token, "line " + std::to_string(i));
  alpha_.print(token, "");
  round();
  for (const auto& o : observed_) EXPECT_THAT(o.log_tail, IsEmpty()) << "only with the exit";

  alpha_.exit(token, 1);
  round();
  auto exited = exit_observation();
  ASSERT_TRUE(exited);
  ASSERT_THAT(exited->log_tail, SizeIs(kTailLines)) << "bounded at 64 lines";
  EXPECT_EQ(exited->log_tail.front(), "line 6");
  EXPECT_EQ(exited->log_tail.back(), "line 69");
  for (const auto& l : exited->log_tail) EXPECT_FALSE(l.starts_with("@orchestrate")) << l;
  EXPECT_THAT(alpha_.output_reads, IsEmpty()) << "it had the lines: nothing to read back";
  EXPECT_EQ(last_attempt(id).state, AttemptState::exited);
}

TEST_F(WorkerTailProbeTest, AfterARestartTheTailIsReadBackFromTheOutput) {
  JobId id = submit(make_job());
  round();
  round();
  std::string token = last_attempt(id).token;
  // The attempt printed 20 KiB that the worker before the restart had read; it then died.
  std::string& out = alpha_.runs[token].output;
  for (int i = 0; out.size() < 20'000; ++i) {
    out += "ordinary line " + std::to_string(i) + " padded to look like a training log\n";
    out += R"(@orchestrate {"event":"progress","step":)" + std::to_string(i) + "}\n";
  }
  const std::string watchdog =
      "[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught "
      "collective operation timeout: WorkNCCL(SeqNum=7753, OpType=ALLREDUCE) ran for 600061 ms";
  out += watchdog + "\nexiting\n";
  restart_worker();
  alpha_.exit(token, 1);
  round();

  auto exited = exit_observation();
  ASSERT_TRUE(exited);
  ASSERT_THAT(alpha_.output_reads, SizeIs(1));
  EXPECT_EQ(std::get<1>(alpha_.output_reads[0]), out.size() - kTailReadBytes);
  ASSERT_THAT(exited->log_tail, SizeIs(kTailLines));
  EXPECT_EQ(exited->log_tail.back(), "exiting");
  EXPECT_EQ(exited->log_tail[kTailLines - 2], watchdog);
  for (const auto& l : exited->log_tail) {
    EXPECT_FALSE(l.starts_with("@orchestrate")) << l;
    EXPECT_TRUE(l.starts_with("ordinary line ") || l == watchdog || l == "exiting")
        << "a partial first line is dropped: " << l;
  }
}

TEST_F(WorkerTailProbeTest, ATinyOutputIsReadBackFromTheStart) {
  JobId id = submit(make_job());
  round();
  std::string token = last_attempt(id).token;
  alpha_.runs[token].output = "loading data\nOSError: [Errno 28] No space left on device\n";
  restart_worker();
  alpha_.exit(token, 1);
  round();
  auto exited = exit_observation();
  ASSERT_TRUE(exited);
  EXPECT_THAT(exited->log_tail,
              ElementsAre("loading data", "OSError: [Errno 28] No space left on device"));
  EXPECT_EQ(std::get<1>(alpha_.output_reads.at(0)), 0u);
}

TEST_F(WorkerTailProbeTest, AProbeRunsOnceAndItsResultsArePosted) {
  ProbeResult n1;
  n1.node = "n1";
  ProbeResult n2;
  n2.node = "n2";
  n2.ok = false;
  alpha_.probe_result = std::vector<ProbeResult>{n1, n2};
  std::int64_t id = enqueue_probe("burn-in-1", {"n1", "n2"});
  round();
  round();
  round();  // the row stays pending (nobody marks it done here): still run only once
  ASSERT_THAT(alpha_.probed, SizeIs(1));
  EXPECT_EQ(alpha_.probed[0].token, "burn-in-1");
  EXPECT_THAT(alpha_.probed[0].nodes, ElementsAre("n1", "n2"));
  ASSERT_THAT(probes_, SizeIs(1));
  EXPECT_EQ(probes_[0].outbox_id, id);
  EXPECT_EQ(probes_[0].cluster, "alpha");
  EXPECT_EQ(probes_[0].token, "burn-in-1");
  ASSERT_TRUE(probes_[0].result.ok());
  ASSERT_THAT(*probes_[0].result, SizeIs(2));
  EXPECT_EQ((*probes_[0].result)[0].node, "n1");
  EXPECT_FALSE((*probes_[0].result)[1].ok);

  // Marked done, then a new round: the next probe runs.
  ASSERT_TRUE(store->mark_action_done(id, clock.now_ms()).ok());
  std::int64_t next = enqueue_probe("release-n2", {"n2"});
  round();
  ASSERT_THAT(probes_, SizeIs(2));
  EXPECT_EQ(probes_[1].outbox_id, next);

  // A restarted server runs a probe still pending: the brain may never have taken the result.
  restart_worker();
  round();
  EXPECT_THAT(alpha_.probed, SizeIs(3));
}

TEST_F(WorkerTailProbeTest, AProbeErrorIsPostedAsAnError) {
  alpha_.probe_result = make_error(ErrorKind::unsupported, "this provider cannot run node probes");
  std::int64_t id = enqueue_probe("burn-in-1", {});
  round();
  round();
  ASSERT_THAT(probes_, SizeIs(1));
  EXPECT_EQ(probes_[0].outbox_id, id);
  ASSERT_FALSE(probes_[0].result.ok());
  EXPECT_EQ(probes_[0].result.error().kind, ErrorKind::unsupported);
  EXPECT_THAT(alpha_.probed, SizeIs(1));
}

TEST_F(WorkerTailProbeTest, AProbeOnASiteThatDoesNotAnswerIsPostedUnreachable) {
  round();  // the site answers once
  alpha_.down = true;
  enqueue_probe("burn-in-1", {});
  round();
  ASSERT_THAT(probes_, SizeIs(1));
  ASSERT_FALSE(probes_[0].result.ok());
  EXPECT_EQ(probes_[0].result.error().kind, ErrorKind::unreachable);
  EXPECT_EQ(store->cluster("alpha").value()->health, SiteHealth::unreachable);
  alpha_.down = false;
  round();
  EXPECT_THAT(probes_, SizeIs(1)) << "not repeated: the brain decides what to do next";
}

TEST_F(WorkerTailProbeTest, AProbeWithABadPayloadIsPostedAsAnError) {
  OutboxRow row;
  row.cluster = "alpha";
  row.kind = ActionKind::probe;
  row.token = "bad";
  row.payload = nlohmann::json{{"nodes", 3}};
  ASSERT_TRUE(store->enqueue(row).ok());
  round();
  ASSERT_THAT(probes_, SizeIs(1));
  EXPECT_FALSE(probes_[0].result.ok());
  EXPECT_THAT(alpha_.probed, IsEmpty());
}

TEST(TailLines, KeepsWhatATerminalShowsCutsLongLinesAndDropsTheRest) {
  EXPECT_EQ(tail_line("epoch 1:  10%\repoch 1:  50%\repoch 1: 100%\r\n"), "epoch 1: 100%");
  EXPECT_EQ(tail_line(R"(@orchestrate {"event":"progress","step":1})"), std::nullopt);
  EXPECT_EQ(tail_line("   \t"), std::nullopt);
  EXPECT_THAT(*tail_line(std::string(5000, 'x')), SizeIs(kTailLineBytes));
  EXPECT_THAT(tail_lines("rtial line\nwhole one\n\n@orchestrate {}\nlast", true),
              ElementsAre("whole one", "last"));
  EXPECT_THAT(tail_lines("first\nsecond\n", false), ElementsAre("first", "second"));
  std::string many;
  for (int i = 0; i < 100; ++i) many += std::to_string(i) + "\n";
  auto lines = tail_lines(many, false);
  ASSERT_THAT(lines, SizeIs(kTailLines));
  EXPECT_EQ(lines.front(), "36");
  EXPECT_EQ(lines.back(), "99");
}

// A gang's task tags its lines "[node/rank] " (issue 41): the tag stays on a kept line (whose
// line it is), and the text after it is what is judged: a protocol line, a blank one, a
// progress bar.
TEST(TailLines, JudgeWhatFollowsAGangTasksTagAndKeepTheTag) {
  EXPECT_EQ(tail_line(R"([east-n0/0] @orchestrate {"event":"progress","step":1})"), std::nullopt);
  EXPECT_EQ(tail_line("[east-n0/0]    "), std::nullopt);
  EXPECT_EQ(tail_line("[east-n1/3] Traceback (most recent call last):"),
            "[east-n1/3] Traceback (most recent call last):");
  EXPECT_EQ(tail_line("[east-n1/3] epoch 1:  10%\repoch 1: 100%\r\n"), "[east-n1/3] epoch 1: 100%");
  EXPECT_THAT(*tail_line("[east-n1/3] " + std::string(5000, 'x')), SizeIs(kTailLineBytes));
  // Only one tag is the agent's: a job's own "[x/1] " after it is its text.
  EXPECT_EQ(tail_line("[n0/0] [x/1] @orchestrate {}"), "[n0/0] [x/1] @orchestrate {}");
  EXPECT_THAT(tail_lines("[n0/0] a\n[n0/1] @orchestrate {}\n[n0/1] b\n", false),
              ElementsAre("[n0/0] a", "[n0/1] b"));
}

}  // namespace
}  // namespace orch::testing
