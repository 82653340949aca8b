// The transfer worker: starts the transfers the brain recorded (queued rows, and running ones
// after a restart) through the TransferPort, one thread per copy, at most max_parallel at once,
// and posts what each copy does to the brain. It never writes the store; these tests play the
// brain's part by editing rows through a second connection. Rounds are driven by hand
// (run_once); only the copies' own threads run, and the tests wait for them with bounded polls.
#include <gmock/gmock.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "scheduler/runtime/transfer_worker.h"
#include "scheduler/store/store.h"
#include "tests/harness/builders.h"

namespace orch::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAre;

// FakeClock's default start: 2023-11-14 22:13:20 UTC.
constexpr Millis kMidnightAfterStart = 1'700'006'400'000;  // 2023-11-15 00:00 UTC
constexpr Millis kHour = 3'600'000;

// True once pred holds, polling every 5 ms for up to 5 s (the copies run on their own threads).
template <typename Pred>
bool eventually(Pred pred) {
  for (int i = 0; i < 1000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

// A TransferPort whose copies are scripted: each run records its request, reports `reports`,
// then blocks, reading the cap as a runner does, until the test releases it (it then returns
// the scripted result) or the worker asks it to stop (it then fails with conflict, "stopped").
class ScriptedTransfers final : public TransferPort {
 public:
  Result<TransferOutcome> run(const TransferRequest& request, TransferControl& control) override {
    std::vector<TransferProgress> reports;
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
      max_active_ = std::max(max_active_, ++active_);
      reports = reports_;
    }
    for (const auto& p : reports) control.progress(p);
    for (;;) {
      const double cap = control.cap_bytes_per_s();
      const bool stop = control.stop_requested();
      std::unique_lock<std::mutex> lock(mu_);
      caps_[request.id] = cap;
      if (releases_[request.id] > 0) {
        --releases_[request.id];
        --active_;
        auto r = results_.find(request.id);
        return r != results_.end() ? r->second : Result<TransferOutcome>(outcome_);
      }
      if (stop) {
        stopped_.push_back(request.id);
        --active_;
        return make_error(ErrorKind::conflict, "stopped");
      }
      cv_.wait_for(lock, std::chrono::milliseconds(2));
    }
  }

  // Script (before the copy starts).
  void report_on_start(std::vector<TransferProgress> reports) {
    std::lock_guard<std::mutex> lock(mu_);
    reports_ = std::move(reports);
  }
  void result_of(std::int64_t id, Result<TransferOutcome> r) {
    std::lock_guard<std::mutex> lock(mu_);
    results_.insert_or_assign(id, std::move(r));
  }
  // Lets one run of transfer `id` end.
  void release(std::int64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    ++releases_[id];
    cv_.notify_all();
  }

  // What was asked.
  std::vector<TransferRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  std::vector<std::int64_t> started_ids() const {
    std::vector<std::int64_t> ids;
    for (const auto& r : requests()) ids.push_back(r.id);
    return ids;
  }
  int active() const {
    std::lock_guard<std::mutex> lock(mu_);
    return active_;
  }
  int max_active() const {
    std::lock_guard<std::mutex> lock(mu_);
    return max_active_;
  }
  // The cap the copy of `id` read last (-1: it has not read one).
  double cap_seen(std::int64_t id) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = caps_.find(id);
    return it == caps_.end() ? -1 : it->second;
  }
  std::vector<std::int64_t> stopped() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stopped_;
  }

  TransferOutcome outcome_{1000, 2.5, "pull via beta login node", 0};

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<TransferRequest> requests_;
  std::vector<TransferProgress> reports_;
  std::map<std::int64_t, Result<TransferOutcome>> results_;
  std::map<std::int64_t, int> releases_;
  std::map<std::int64_t, double> caps_;
  std::vector<std::int64_t> stopped_;
  int active_ = 0;
  int max_active_ = 0;
};

class TransferWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The worker reads through its own connection, so the state must be a real file.
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("orch-transfer-worker-") +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    db_ = (dir_ / "state.db").string();
    store = std::move(Store::open(db_).value());
    ASSERT_TRUE(store->insert_dataset({"imagenet", std::nullopt, 0, clock.now_ms()}).ok());
  }
  void TearDown() override {
    worker.reset();  // stops and joins the copies still held by the port
    store.reset();
    std::filesystem::remove_all(dir_);
  }

  void start_worker(std::vector<ClusterSpec> clusters = {make_cluster("alpha"),
                                                         make_cluster("beta")},
                    int max_parallel = 4) {
    worker = std::make_unique<TransferWorker>(
        std::move(clusters), port, std::move(StoreReader::open(db_).value()),
        [this](BrainEvent e) {
          std::lock_guard<std::mutex> lock(posted_mu_);
          posted_.push_back(std::move(e));
        },
        clock, max_parallel);
  }
  static ClusterSpec with_windows(const std::string& name, std::vector<std::string> windows) {
    ClusterSpec c = make_cluster(name);
    c.data.windows = std::move(windows);
    return c;
  }

  // A dataset copy from src to dst, as the brain queues it.
  TransferRow dataset_copy(const std::string& src = "alpha", const std::string& dst = "beta") {
    TransferRow t;
    t.dataset = "imagenet";
    t.replica_id = 1;
    t.src_cluster = src;
    t.src_path = "/data/imagenet";
    t.dst_cluster = dst;
    t.dst_path = "/stage/imagenet";
    t.directory = true;
    t.why = "staging job 7";
    t.bytes_total = 123456;
    t.created_ms = clock.now_ms();
    return t;
  }
  // A checkpoint copy (replication) from src to dst.
  TransferRow checkpoint_copy(const std::string& src = "alpha", const std::string& dst = "beta") {
    JobRow j;
    j.name = "toy";
    j.spec = make_job();
    j.created_ms = j.updated_ms = clock.now_ms();
    j.id = store->insert_job(j).value();
    AttemptRow a;
    a.job_id = j.id;
    a.no = 1;
    a.cluster = src;
    a.token = "orch-" + std::to_string(j.id) + "-1";
    a.gpus = 1;
    a.id = store->insert_attempt(a).value();
    TransferRow t = dataset_copy(src, dst);
    t.dataset.clear();
    t.checkpoint_id =
        store->insert_checkpoint({0, j.id, a.id, 300, "/ckpt/step-300", {}, 1}).value().value();
    t.src_path = t.dst_path = "/ckpt/step-300";
    t.why = "replication";
    return t;
  }
  std::int64_t add(const TransferRow& t) { return store->insert_transfer(t).value(); }
  TransferRow row(std::int64_t id) { return store->transfer(id).value().value(); }
  // The brain's part: it edits the row (as it does when it handles the worker's events).
  void brain_sets(std::int64_t id, TransferState state, int tries = -1) {
    TransferRow t = row(id);
    t.state = state;
    if (tries >= 0) t.tries = tries;
    t.updated_ms = clock.now_ms();
    ASSERT_TRUE(store->update_transfer(t).ok());
  }
  void brain_caps(std::int64_t id, double cap_bps) {
    TransferRow t = row(id);
    t.cap_bps = cap_bps;
    t.cap_changed_ms = clock.now_ms();
    ASSERT_TRUE(store->update_transfer(t).ok());
  }

  std::vector<BrainEvent> posted() {
    std::lock_guard<std::mutex> lock(posted_mu_);
    return posted_;
  }
  // "progressed" / "finished" for each event posted about transfer id, in order.
  std::vector<std::string> posted_about(std::int64_t id) {
    std::vector<std::string> kinds;
    for (const auto& e : posted()) {
      if (const auto* p = std::get_if<TransferProgressed>(&e); p && p->transfer_id == id) {
        kinds.push_back("progressed");
      }
      if (const auto* f = std::get_if<TransferFinished>(&e); f && f->transfer_id == id) {
        kinds.push_back("finished");
      }
    }
    return kinds;
  }
  std::optional<TransferFinished> finished(std::int64_t id) {
    for (const auto& e : posted()) {
      if (const auto* f = std::get_if<TransferFinished>(&e); f && f->transfer_id == id) return *f;
    }
    return std::nullopt;
  }
  bool started(std::size_t copies) {
    return eventually([&] { return port.requests().size() >= copies; });
  }
  // Rounds until the ended copies are reaped (none left running), or more copies than
  // `copies` were started.
  bool rounds_until_reaped(std::size_t copies) {
    return eventually([&] {
      worker->run_once();
      return worker->running() == 0 || port.requests().size() > copies;
    });
  }

  std::filesystem::path dir_;
  std::string db_;
  FakeClock clock;
  ScriptedTransfers port;
  std::unique_ptr<Store> store;
  std::mutex posted_mu_;
  std::vector<BrainEvent> posted_;
  std::unique_ptr<TransferWorker> worker;  // last: destroyed first
};

TEST_F(TransferWorkerTest, AQueuedTransferIsStartedWithWhatItsRowSays) {
  start_worker();
  const std::int64_t id = add(dataset_copy("alpha", "beta"));

  worker->run_once();

  ASSERT_TRUE(started(1));
  const TransferRequest r = port.requests()[0];
  EXPECT_EQ(r.id, id);
  EXPECT_EQ(r.from.cluster, "alpha");
  EXPECT_EQ(r.from.path, "/data/imagenet");
  EXPECT_EQ(r.to.cluster, "beta");
  EXPECT_EQ(r.to.path, "/stage/imagenet");
  EXPECT_TRUE(r.directory);
  EXPECT_EQ(r.bytes_hint, 123456u);
  EXPECT_FALSE(r.checksum) << "a first copy compares sizes and times";
  EXPECT_EQ(worker->running(), 1);
}

TEST_F(TransferWorkerTest, ACopyPostsThatItStartedThenHowItEnded) {
  start_worker();
  const std::int64_t id = add(dataset_copy());

  worker->run_once();
  ASSERT_TRUE(started(1));
  ASSERT_TRUE(eventually([&] { return !posted_about(id).empty(); }))
      << "the first report marks the copy running";
  EXPECT_THAT(posted_about(id), ElementsAre("progressed"));
  port.release(id);

  ASSERT_TRUE(eventually([&] { return finished(id).has_value(); }));
  EXPECT_THAT(posted_about(id), ElementsAre("progressed", "finished"));
  auto end = *finished(id);
  ASSERT_TRUE(end.result.ok());
  EXPECT_EQ(end.result->bytes, 1000u);
  EXPECT_DOUBLE_EQ(end.result->seconds, 2.5);
  EXPECT_EQ(end.result->route, "pull via beta login node");
}

TEST_F(TransferWorkerTest, AFailedCopyPostsItsError) {
  start_worker();
  const std::int64_t id = add(dataset_copy());
  port.result_of(id, make_error(ErrorKind::io, "rsync: write failed: No space left on device"));

  worker->run_once();
  ASSERT_TRUE(started(1));
  port.release(id);

  ASSERT_TRUE(eventually([&] { return finished(id).has_value(); }));
  auto end = *finished(id);
  ASSERT_FALSE(end.result.ok());
  EXPECT_EQ(end.result.error().kind, ErrorKind::io);
  EXPECT_THAT(end.result.error().message, ::testing::HasSubstr("No space left"));
}

TEST_F(TransferWorkerTest, ABurstOfReportsDoesNotFloodTheBrain) {
  // At most two reports a second reach the brain; the first (the copy runs) always does.
  start_worker();
  const std::int64_t id = add(dataset_copy());
  std::vector<TransferProgress> burst;
  for (int i = 1; i <= 20; ++i) burst.push_back({static_cast<std::uint64_t>(i) * 100, 2000});
  port.report_on_start(burst);

  worker->run_once();
  ASSERT_TRUE(started(1));
  port.release(id);
  ASSERT_TRUE(eventually([&] { return finished(id).has_value(); }));

  auto kinds = posted_about(id);
  EXPECT_GE(std::count(kinds.begin(), kinds.end(), "progressed"), 1);
  EXPECT_LE(std::count(kinds.begin(), kinds.end(), "progressed"), 2);
}

TEST_F(TransferWorkerTest, ARunningCopyIsNotStartedAgain) {
  start_worker();
  add(dataset_copy());

  worker->run_once();
  ASSERT_TRUE(started(1));
  worker->run_once();
  worker->run_once();

  EXPECT_EQ(worker->running(), 1);
  EXPECT_THAT(port.started_ids(), SizeIs(1));
}

TEST_F(TransferWorkerTest, AFinishedCopyWaitsForTheBrainThenARetryComparesChecksums) {
  start_worker();
  const std::int64_t id = add(dataset_copy());
  worker->run_once();
  ASSERT_TRUE(started(1));
  brain_sets(id, TransferState::running, 1);  // the brain handled the first report
  port.release(id);
  ASSERT_TRUE(eventually([&] { return finished(id).has_value(); }));

  // Posted, but the brain has not handled the end yet: its row still says running.
  ASSERT_TRUE(rounds_until_reaped(1));
  EXPECT_THAT(port.started_ids(), SizeIs(1));

  // The brain handled it: the copy is being verified.
  brain_sets(id, TransferState::verifying);
  worker->run_once();
  worker->run_once();
  EXPECT_THAT(port.started_ids(), SizeIs(1));

  // The verification failed: the brain queues the copy again.
  brain_sets(id, TransferState::queued, 1);
  worker->run_once();
  ASSERT_TRUE(started(2));
  EXPECT_EQ(port.requests()[1].id, id);
  EXPECT_TRUE(port.requests()[1].checksum) << "a same-size corrupt file must be copied again";
}

TEST_F(TransferWorkerTest, AFinishedCopyIsNotStartedAgainBeforeTheBrainHasHandledItsEvents) {
  // The copy ended before the brain got to its first report: the row still says queued, as it
  // did when the copy started. Starting it again would copy twice and post a second end.
  start_worker();
  const std::int64_t id = add(dataset_copy());
  worker->run_once();
  ASSERT_TRUE(started(1));
  port.release(id);
  ASSERT_TRUE(eventually([&] { return finished(id).has_value(); }));

  rounds_until_reaped(1);

  EXPECT_THAT(port.started_ids(), ElementsAre(id)) << "started once";
}

TEST_F(TransferWorkerTest, ARowWhoseNextTryIsLaterWaitsForTheClock) {
  start_worker();
  TransferRow t = dataset_copy();
  t.next_try_ms = clock.now_ms() + 60'000;  // backoff after a failure
  const std::int64_t id = add(t);

  worker->run_once();
  clock.advance_ms(59'999);
  worker->run_once();
  EXPECT_EQ(worker->running(), 0);

  clock.advance_ms(1);
  worker->run_once();
  ASSERT_TRUE(started(1));
  EXPECT_EQ(port.requests()[0].id, id);
}

TEST_F(TransferWorkerTest, ARowBeingVerifiedIsNotStarted) {
  start_worker();
  TransferRow t = dataset_copy();
  t.state = TransferState::verifying;
  add(t);

  worker->run_once();
  worker->run_once();

  EXPECT_EQ(worker->running(), 0);
  EXPECT_THAT(port.started_ids(), IsEmpty());
}

TEST_F(TransferWorkerTest, EndedRowsAreNotStarted) {
  start_worker();
  for (TransferState s : {TransferState::done, TransferState::failed, TransferState::cancelled}) {
    TransferRow t = dataset_copy();
    t.state = s;
    add(t);
  }

  worker->run_once();

  EXPECT_EQ(worker->running(), 0);
  EXPECT_THAT(port.started_ids(), IsEmpty());
}

TEST_F(TransferWorkerTest, ACopyThatWasRunningBeforeARestartIsResumed) {
  start_worker();
  const std::int64_t id = add(dataset_copy());
  brain_sets(id, TransferState::running, 1);

  worker->run_once();

  ASSERT_TRUE(started(1));
  EXPECT_EQ(port.requests()[0].id, id);
}

TEST_F(TransferWorkerTest, AtMostMaxParallelCopiesRunAtOnceOldestFirst) {
  start_worker({make_cluster("alpha"), make_cluster("beta")}, 2);
  const std::int64_t first = add(dataset_copy());
  const std::int64_t second = add(dataset_copy());
  const std::int64_t third = add(dataset_copy());

  worker->run_once();
  ASSERT_TRUE(started(2));
  worker->run_once();

  EXPECT_EQ(worker->running(), 2);
  EXPECT_THAT(port.started_ids(), UnorderedElementsAre(first, second));

  brain_sets(first, TransferState::verifying);  // the brain handled its end
  port.release(first);
  ASSERT_TRUE(eventually([&] {
    worker->run_once();
    return port.requests().size() >= 3;
  }));
  EXPECT_THAT(port.started_ids(), UnorderedElementsAre(first, second, third));
  EXPECT_EQ(worker->running(), 2);
  EXPECT_LE(port.max_active(), 2);
}

TEST_F(TransferWorkerTest, ADatasetCopyWaitsForTheWindowOfItsSource) {
  start_worker({with_windows("alpha", {"00:00-06:00"}), make_cluster("beta")});
  const std::int64_t id = add(dataset_copy("alpha", "beta"));

  worker->run_once();  // 22:13 UTC
  EXPECT_EQ(worker->running(), 0);

  clock.set_ms(kMidnightAfterStart + kHour);  // 01:00 UTC
  worker->run_once();
  ASSERT_TRUE(started(1));
  EXPECT_EQ(port.requests()[0].id, id);
}

TEST_F(TransferWorkerTest, ADatasetCopyWaitsForTheWindowOfItsDestination) {
  start_worker({make_cluster("alpha"), with_windows("beta", {"23:00-23:30"})});
  add(dataset_copy("alpha", "beta"));

  worker->run_once();  // 22:13 UTC
  EXPECT_EQ(worker->running(), 0);

  clock.set_ms(kMidnightAfterStart - kHour + 60'000);  // 23:01 UTC
  worker->run_once();
  ASSERT_TRUE(started(1));
}

TEST_F(TransferWorkerTest, ACheckpointCopyIsNotHeldBackByWindows) {
  start_worker({with_windows("alpha", {"00:00-06:00"}), with_windows("beta", {"00:00-06:00"})});
  const std::int64_t id = add(checkpoint_copy("alpha", "beta"));

  worker->run_once();  // 22:13 UTC, outside both windows

  ASSERT_TRUE(started(1));
  EXPECT_EQ(port.requests()[0].id, id);
}

TEST_F(TransferWorkerTest, TheWindowOfAnotherSiteDoesNotHoldACopyBack) {
  start_worker(
      {make_cluster("alpha"), make_cluster("beta"), with_windows("gamma", {"00:00-06:00"})});
  add(dataset_copy("alpha", "beta"));

  worker->run_once();

  ASSERT_TRUE(started(1));
}

TEST_F(TransferWorkerTest, ACopyWaitingForItsWindowDoesNotTakeASlot) {
  start_worker({with_windows("alpha", {"00:00-06:00"}), make_cluster("beta")}, 1);
  add(dataset_copy("alpha", "beta"));  // older, but outside its window
  const std::int64_t replication = add(checkpoint_copy("alpha", "beta"));

  worker->run_once();

  ASSERT_TRUE(started(1));
  EXPECT_THAT(port.started_ids(), ElementsAre(replication));
}

TEST_F(TransferWorkerTest, TheCapTheCopySeesFollowsTheRowAsTheBrainChangesIt) {
  start_worker();
  TransferRow t = dataset_copy();
  t.cap_bps = t.base_cap_bps = 40e6;
  const std::int64_t id = add(t);

  worker->run_once();
  ASSERT_TRUE(started(1));
  EXPECT_TRUE(eventually([&] { return port.cap_seen(id) == 40e6; }));

  brain_caps(id, 20e6);  // throttled: a job's MFU dropped
  EXPECT_TRUE(eventually([&] { return port.cap_seen(id) == 20e6; })) << port.cap_seen(id);

  brain_caps(id, 0);  // uncapped again
  EXPECT_TRUE(eventually([&] { return port.cap_seen(id) == 0; })) << port.cap_seen(id);
}

TEST_F(TransferWorkerTest, StopAsksRunningCopiesToStopAndWaitsForThem) {
  start_worker();
  const std::int64_t a = add(dataset_copy());
  const std::int64_t b = add(checkpoint_copy());
  worker->run_once();
  ASSERT_TRUE(started(2));

  worker->stop();

  EXPECT_THAT(port.stopped(), UnorderedElementsAre(a, b));
  EXPECT_EQ(port.active(), 0) << "stop() returns once the copies have ended";
  EXPECT_EQ(worker->running(), 0);
  for (std::int64_t id : {a, b}) {
    auto end = finished(id);
    ASSERT_TRUE(end.has_value()) << id;
    ASSERT_FALSE(end->result.ok());
    EXPECT_EQ(end->result.error().kind, ErrorKind::conflict) << "stopped, not failed";
  }
}

TEST_F(TransferWorkerTest, AStoppedWorkerStartsNothing) {
  start_worker();
  worker->stop();
  add(dataset_copy());

  worker->run_once();

  EXPECT_EQ(worker->running(), 0);
  EXPECT_THAT(port.started_ids(), IsEmpty());
}

}  // namespace
}  // namespace orch::testing
