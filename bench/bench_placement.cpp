// Placement decisions per second with a long, mixed queue (issue 18): 10,000 waiting jobs of
// four priorities and five teams, 100 clusters of 1,000 nodes x 8 GPUs, all still awaiting
// delivery. The clusters are then delivered and the brain places the queue, highest priority
// first, 200 jobs per tick, each a full decision (filters and scores over 100 clusters, the
// verdicts, the attempt, the outbox row, the events) in its event's transaction. The baseline,
// in the same run: the pure placement pipeline over the same 100 clusters, without the store.
//
//   build-release/bin/bench_placement [--jobs N]
#include <mimalloc.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "bench/bench_util.h"
#include "scheduler/brain/brain.h"
#include "scheduler/store/wal_checkpointer.h"

using namespace orch;  // NOLINT: a benchmark's main file

namespace {

constexpr int kClusters = 100;
constexpr int kNodes = 1000;

std::vector<ClusterSpec> fleet() {
  std::vector<ClusterSpec> out;
  for (int i = 0; i < kClusters; ++i) {
    ClusterSpec c;
    c.name = "c" + std::to_string(i);
    c.nodes = kNodes;
    c.gpus_per_node = 8;
    c.accelerator = "h100";
    c.delivery.promised = "2026-12-10";
    c.delivery.promised_ms = 1'796'860'800'000;
    out.push_back(c);
  }
  return out;
}

JobSpec job(int i) {
  static const int priorities[] = {0, 100, 500, 1000};
  static const char* teams[] = {"vision", "speech", "llm", "rl", "infra"};
  JobSpec j;
  j.name = "j" + std::to_string(i);
  j.command = "train";
  j.nodes = 1 + i % 4;
  j.gpus_per_node = 8;
  j.model.parameters = 7e9;
  j.priority = priorities[i % 4];
  j.team = teams[i % 5];
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  int jobs = 10'000;
  if (auto rc = bench::parse_flags(argc, argv, "bench_placement",
                                   "Placement decisions per second with a long mixed queue.",
                                   {{"--jobs", "N", "waiting jobs (default 10000)", 1, 1e6, true,
                                     [&](double v) { jobs = static_cast<int>(v); }}})) {
    return *rc;
  }

  // Baseline: the pure pipeline, 100 clusters, no store.
  const std::vector<ClusterSpec> specs = fleet();
  std::vector<ClusterView> views;
  views.reserve(specs.size());
  for (const auto& c : specs) views.push_back(ClusterView{&c, SiteHealth::healthy, 0, {}});
  const PlacementPipeline pipeline = PlacementPipeline::standard();
  std::size_t chosen = 0;
  auto t0 = bench::SteadyClock::now();
  for (int i = 0; i < jobs; ++i) {
    const JobSpec spec = job(i);
    PlacementRequest req{&spec};
    chosen += pipeline.place(req, views).chosen ? 1 : 0;
  }
  const double pure = jobs / bench::seconds_since(t0);

  // The brain: a file-backed store, the queue waiting on undelivered clusters.
  const auto dir = std::filesystem::temp_directory_path() / "orch-bench-placement";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto store = Store::open((dir / "state.db").string()).value();
  // As the server runs it (server/server.cpp): checkpoints on a thread of their own.
  auto checkpointer = WalCheckpointer::start(*store, (dir / "state.db").string()).value();
  FakeClock clock;
  Brain brain(*store, clock, specs);
  if (auto r = brain.start(); !r) {
    std::fprintf(stderr, "bench_placement: %s\n", r.error().message.c_str());
    return 1;
  }
  auto s0 = bench::SteadyClock::now();
  for (int i = 0; i < jobs; ++i) (void)brain.handle(SubmitJob{job(i)});
  const double submit = jobs / bench::seconds_since(s0);

  auto p0 = bench::SteadyClock::now();
  for (const auto& c : specs) {
    (void)brain.handle(SetClusterAdmission{c.name, Admission::active, "delivered"});
  }
  int ticks = 0;
  for (;;) {
    auto waiting = store->waiting_jobs();
    if (!waiting || waiting->empty() || ticks > jobs) break;
    clock.advance_ms(250);
    (void)brain.handle(Tick{});
    ++ticks;
  }
  const double placing_s = bench::seconds_since(p0);
  auto placed = store->live_attempts(std::nullopt);
  const std::size_t n = placed ? placed->size() : 0;
  const double brain_rate = static_cast<double>(n) / placing_s;
  const auto checkpoints = checkpointer->checkpoints();
  const auto inline_checkpoints = checkpointer->inline_checkpoints();
  checkpointer.reset();
  store.reset();
  std::filesystem::remove_all(dir);

  std::printf(
      "placement decisions per second: %d waiting jobs (4 priorities, 5 teams), %d "
      "clusters x %d nodes x 8 GPUs\n\n",
      jobs, kClusters, kNodes);
  std::printf("%-58s %12s %10s\n", "measure", "per second", "vs pure");
  std::printf("%-58s %12.0f %9.2fx\n", "pure pipeline.place over 100 clusters (baseline)", pure,
              1.0);
  std::printf("%-58s %12.0f %9.2fx\n", "brain: queue placed once delivered (decision + writes)",
              brain_rate, brain_rate / pure);
  std::printf("%-58s %12.0f %9.2fx\n", "brain: SubmitJob while nothing fits (queue grows)", submit,
              submit / pure);
  std::printf("\nplaced %zu of %d in %.2f s over %d ticks (pure pipeline chose %zu)\n", n, jobs,
              placing_s, ticks, chosen);
  // As the server allocates (the top CMakeLists.txt): says so, so that a figure is not compared
  // with one made under another allocator unawares.
  void* probe = std::malloc(64);
  std::printf("malloc: %s\n", mi_is_in_heap_region(probe)
                                  ? ("mimalloc " + std::to_string(mi_version())).c_str()
                                  : "the C library's");
  std::free(probe);
  std::printf("WAL checkpoints: %llu on their own thread, %llu by the brain's thread\n",
              static_cast<unsigned long long>(checkpoints),
              static_cast<unsigned long long>(inline_checkpoints));
  return 0;
}
