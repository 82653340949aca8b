// How many events per second the brain decides, against the floor it cannot beat: an empty
// SQLite write transaction on the same kind of file (WAL, synchronous=NORMAL). Every brain event
// is one such transaction plus its work, so the ratio shows what the decisions themselves cost.
//
//   build/bin/bench_brain [--events N]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>

#include "bench/bench_util.h"
#include "scheduler/brain/brain.h"
#include "scheduler/store/wal_checkpointer.h"

using namespace orch;  // NOLINT: a benchmark's main file

namespace {

struct Bench {
  std::filesystem::path dir;
  std::unique_ptr<Store> store;
  std::unique_ptr<WalCheckpointer> checkpointer;  // as the server: checkpoints off the brain
  FakeClock clock;
  std::unique_ptr<Brain> brain;

  explicit Bench(const std::string& name, int nodes = 1000) {
    dir = std::filesystem::temp_directory_path() / ("orch-bench-" + name);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    store = std::move(Store::open((dir / "state.db").string()).value());
    checkpointer = std::move(WalCheckpointer::start(*store, (dir / "state.db").string()).value());
    std::vector<ClusterSpec> clusters;
    for (const char* n : {"alpha", "beta", "gamma", "delta"}) {
      ClusterSpec c;
      c.name = n;
      c.nodes = nodes;
      c.gpus_per_node = 8;
      c.accelerator = "h100";
      clusters.push_back(c);
    }
    brain = std::make_unique<Brain>(*store, clock, clusters);
    (void)brain->start();
  }
  ~Bench() {
    brain.reset();
    checkpointer.reset();
    store.reset();
    std::filesystem::remove_all(dir);
  }
};

double per_second(int n, const std::function<void(int)>& body) {
  auto t0 = bench::SteadyClock::now();
  for (int i = 0; i < n; ++i) body(i);
  return n / bench::seconds_since(t0);
}

JobSpec job() {
  JobSpec j;
  j.name = "bench";
  j.command = "train";
  j.gpus_per_node = 8;
  j.model.parameters = 7e9;
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 2000;
  if (auto rc = orch::bench::parse_flags(
          argc, argv, "bench_brain",
          "The brain's throughput: submits, observations and ticks per second.",
          {{"--events", "N", "events per measurement (default 2000)", 1, 1e7, true,
            [&](double v) { n = static_cast<int>(v); }}})) {
    return *rc;
  }

  Bench base("baseline");
  double baseline =
      per_second(n, [&](int) { (void)base.store->transaction([] { return Result<void>(); }); });

  Bench sub("submit");
  double submit = per_second(n, [&](int) { (void)sub.brain->handle(SubmitJob{job()}); });

  // Observations: 200 running attempts, each reporting 10 progress lines per poll.
  Bench obs("observe");
  std::vector<std::string> tokens;
  for (int i = 0; i < 200; ++i) {
    auto r = obs.brain->handle(SubmitJob{job()});
    auto a = obs.store->attempts_of(r->job_id).value();
    tokens.push_back(a.back().token);
    (void)obs.brain->handle(AttemptObserved{
        a.back().cluster, a.back().token, RunPhase::running, std::nullopt, {}, {}, {}});
  }
  double observe = per_second(n, [&](int i) {
    AttemptObserved e;
    e.token = tokens[static_cast<std::size_t>(i) % tokens.size()];
    e.phase = RunPhase::running;
    std::int64_t step0 = static_cast<std::int64_t>(i / tokens.size()) * 10;
    for (int k = 1; k <= 10; ++k)
      e.reports.push_back(ProgressReport{step0 + k, 4096, 0.5, std::nullopt});
    (void)obs.brain->handle(e);
  });

  // Ticks over the same 200 running jobs (nothing waiting): the timer's steady-state cost.
  double tick = per_second(n, [&](int) { (void)obs.brain->handle(Tick{}); });

  // A queue of 10,000 jobs that cannot be placed yet: four clusters of 2 nodes, each held by a
  // running job, and 10,000 more jobs of one node each behind them.
  // The same three events on four full clusters (2 nodes each, held by a running job), first
  // with nothing waiting behind them, then with 10,000 jobs of one node waiting.
  constexpr int kWaiting = 10'000;
  SiteInventory up, down;  // a node of alpha flaps: capacity changes on every event
  for (int k = 0; k < 2; ++k) {
    up.nodes.push_back({"alpha-n" + std::to_string(k), 8, true, ""});
    down.nodes.push_back({"alpha-n" + std::to_string(k), 8, k == 0, k == 0 ? "" : "drained"});
  }
  struct QueueFigures {
    double submit = 0, tick = 0, flap = 0;
  };
  auto measure_queue = [&](const std::string& name, int waiting) {
    Bench b(name, 2);
    for (int i = 0; i < 4; ++i) {
      JobSpec big = job();
      big.nodes = 2;
      (void)b.brain->handle(SubmitJob{big});
    }
    for (int i = 0; i < waiting; ++i) (void)b.brain->handle(SubmitJob{job()});
    QueueFigures f;
    f.tick = per_second(n, [&](int) { (void)b.brain->handle(Tick{}); });
    // Yet no waiting job can fit: each event asks every one "could anything hold you?" in
    // memory, and tries none.
    f.flap = per_second(n, [&](int i) {
      (void)b.brain->handle(InventoryObserved{"alpha", i % 2 ? up : down});
    });
    f.submit = per_second(n, [&](int) { (void)b.brain->handle(SubmitJob{job()}); });
    return f;
  };
  const QueueFigures empty = measure_queue("queue-empty", 0);
  const QueueFigures queued = measure_queue("queue-full", kWaiting);

  std::printf("brain events per second (%d events each, file-backed WAL store)\n\n", n);
  std::printf("%-44s %12s %10s\n", "event", "events/s", "vs floor");
  auto row = [&](const char* name, double v) {
    std::printf("%-44s %12.0f %9.2fx\n", name, v, v / baseline);
  };
  row("floor: empty write transaction (baseline)", baseline);
  row("SubmitJob (parse-free, place, outbox)", submit);
  row("AttemptObserved (10 progress lines)", observe);
  row("Tick (200 running jobs, none waiting)", tick);
  std::printf("\nfour full clusters, %d jobs waiting for capacity against none waiting\n\n",
              kWaiting);
  std::printf("%-44s %12s %10s\n", "event", "events/s", "vs empty");
  auto queued_row = [&](const char* name, double v, double with_none) {
    std::printf("%-44s %12.0f %9.2fx\n", name, v, v / with_none);
  };
  queued_row("SubmitJob (waits: nothing fits)", queued.submit, empty.submit);
  queued_row("Tick (nothing changed)", queued.tick, empty.tick);
  queued_row("InventoryObserved (a node flaps, none fits)", queued.flap, empty.flap);
  return 0;
}
