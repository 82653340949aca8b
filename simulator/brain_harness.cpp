// The real brain stepped over the simulated world (brain_harness.h).
#include "simulator/brain_harness.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <string>
#include <utility>

#include "simulator/sim_clock.h"

namespace orch::sim {

namespace {

// When the work runs steadily and nothing else happened for a while, the brain's timers are
// looked at this often (hang limits, cooldowns, audits and retention are minutes or more).
constexpr double kIdleTickS = 300;

// Rounds of "the workers carry out what the brain just wrote" at one instant before time moves
// on (a launch, its confirmation, a listing, the next launch ...): far more than a chain needs.
constexpr int kSettleRounds = 32;

std::string memory_uri() {
  static std::atomic<std::uint64_t> next{0};
  return "file:orchestrate-sim-" + std::to_string(next++) + "?mode=memory&cache=shared";
}

}  // namespace

ClusterSpec sim_cluster_spec(const SimCluster& c, double poll_s, bool tiered) {
  ClusterSpec spec;
  spec.name = c.name;
  spec.provider = "sim";
  spec.nodes = c.nodes;
  spec.gpus_per_node = c.gpus_per_node;
  spec.accelerator = "h100";
  spec.peak_tflops = c.peak_flops_per_gpu / 1e12;
  spec.checkpoint_root = c.checkpoint_root;
  spec.storage_root = "/sim/" + c.name;
  // Tiered saves: each node's own directory (its copies resumed from by a one-node job only).
  if (tiered) spec.node_local_root = "/sim/local/{node}";
  spec.poll_interval_ms = static_cast<int>(poll_s * 1000);
  return spec;
}

JobSpec sim_job_spec(const SimJob& job, int nodes, int gpus_per_node,
                     const std::vector<SimCluster>& clusters, double poll_s) {
  JobSpec j;
  j.name = job.name;
  j.command = "simulated training of " + job.name;
  j.nodes = nodes;
  j.gpus_per_node = gpus_per_node;
  j.checkpoint.dir = "/sim/ckpt/" + job.name;
  if (job.checkpoint_every > 0) {
    j.checkpoint.interval_steps = static_cast<int>(
        std::min<std::int64_t>(job.checkpoint_every, std::numeric_limits<int>::max()));
  }
  if (job.tokens_per_step > 0) {
    j.model.flops_per_token = job.flops_per_step / static_cast<double>(job.tokens_per_step);
  }
  double every = 0;
  for (const auto& c : clusters) every = std::max(every, c.progress_every_s);
  j.health.hang_after_s = 3 * every + poll_s;
  return j;
}

BrainHarness::BrainHarness(SimWorld& world, std::unique_ptr<Store> store,
                           std::vector<ClusterSpec> clusters, SchedulingSpec scheduling)
    : world_(world),
      store_(std::move(store)),
      clock_(kSimEpochMs),
      specs_(std::move(clusters)),
      brain_(*store_, clock_, specs_, PlacementPipeline::standard(), std::move(scheduling)) {}

BrainHarness::~BrainHarness() = default;

Result<std::unique_ptr<BrainHarness>> BrainHarness::make(SimWorld& world,
                                                         std::vector<ClusterSpec> clusters,
                                                         SchedulingSpec scheduling,
                                                         double transfer_bytes_per_s) {
  const std::string uri = memory_uri();
  auto store = Store::open(uri);
  if (!store) return store.error();
  std::unique_ptr<BrainHarness> h(
      new BrainHarness(world, std::move(*store), std::move(clusters), std::move(scheduling)));
  if (auto r = h->start(uri, transfer_bytes_per_s); !r) return r.error();
  return h;
}

Result<void> BrainHarness::start(const std::string& uri, double transfer_bytes_per_s) {
  if (auto r = brain_.start(); !r) return r.error();
  auto post = [this](BrainEvent e) { events_queue_.push_back(std::move(e)); };
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    sites_.push_back(std::make_unique<SimSite>(world_, lock_, i, kSimEpochMs));
    auto reader = StoreReader::open(uri);
    auto storage_reader = StoreReader::open(uri);
    if (!reader) return reader.error();
    if (!storage_reader) return storage_reader.error();
    workers_.push_back(
        std::make_unique<SiteWorker>(specs_[i], *sites_[i], std::move(*reader), post));
    storage_.push_back(
        std::make_unique<StorageWorker>(specs_[i], *sites_[i], std::move(*storage_reader), post));
  }
  auto transfer_reader = StoreReader::open(uri);
  if (!transfer_reader) return transfer_reader.error();
  transfer_reader_ = std::move(*transfer_reader);
  transfers_ = std::make_unique<SimTransfers>(*transfer_reader_, world_, lock_,
                                              transfer_bytes_per_s, kSimEpochMs, post);
  seen_work_ = brain_.work_epoch();
  return {};
}

Result<JobId> BrainHarness::submit(JobSpec spec) {
  auto submitted = brain_.handle(SubmitJob{std::move(spec)});
  ++events_;
  if (!submitted) return submitted.error();
  return submitted->job_id;
}

void BrainHarness::handle(const BrainEvent& e) {
  ++events_;
  if (!brain_.handle(e)) ++events_refused_;
}

void BrainHarness::drain() {
  while (!events_queue_.empty()) {
    BrainEvent e = std::move(events_queue_.front());
    events_queue_.pop_front();
    handle(e);
  }
}

void BrainHarness::settle(double t) {
  for (int round = 0; round < kSettleRounds && brain_.work_epoch() != seen_work_; ++round) {
    seen_work_ = brain_.work_epoch();
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      workers_[i]->run_once();
      storage_[i]->run_once();
    }
    transfers_->step(t);
    drain();
  }
}

void BrainHarness::run(const HarnessLoop& loop) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::size_t n = specs_.size();
  std::vector<double> last_poll(n, -1);
  // The earliest change at each site since its last poll that the world has already made: time
  // moved past it for another reason (a tick, another site's poll), and the world's next_change
  // no longer names it. Without it, a node that failed just before a tick went unseen until
  // the site's next change (a progress line, up to half an hour later).
  std::vector<double> unseen(n, inf);
  double next_tick = 0;
  // The server ticks every quarter second; most of those ticks find nothing due. Here the brain
  // ticks every tick_s while anything is going on (an event in the last two ticks, or work not
  // running steadily: waiting out a backoff, staging, moving, queued), else every kIdleTickS.
  std::int64_t events_at_tick = 0;
  double last_activity = 0;
  auto steady = [&](double t) {
    if (t - last_activity < 2 * loop.tick_s) return false;
    return !loop.runs_steadily || loop.runs_steadily();
  };
  std::vector<double> due(n);
  std::vector<double> change(n);
  for (;;) {
    double t = std::min(next_tick, transfers_->next_finish());
    const double arrival = loop.next_arrival ? loop.next_arrival() : inf;
    t = std::min(t, arrival);
    for (std::size_t i = 0; i < n; ++i) {
      change[i] = world_.next_change(i, std::max(last_poll[i], 0.0));
      due[i] = next_poll(std::min(change[i], unseen[i]), last_poll[i], loop.poll_s);
      t = std::min(t, due[i]);
    }
    if (t > loop.end) break;
    for (std::size_t i = 0; i < n; ++i) {
      if (change[i] <= t) unseen[i] = std::min(unseen[i], change[i]);
    }
    clock_.set_ms(sim_ms(t));
    {
      std::lock_guard<std::mutex> hold(lock_);
      world_.advance_to(t);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (due[i] > t) continue;
      workers_[i]->run_once();
      last_poll[i] = t;
      unseen[i] = inf;
    }
    const std::int64_t before = events_;
    if (arrival <= t && loop.arrive) loop.arrive(t);
    transfers_->step(t);
    drain();
    // Something happened: the brain's timers (a backoff, a grace) are watched closely again.
    if (events_ != before) next_tick = std::min(next_tick, t + loop.tick_s);
    if (next_tick <= t) {
      if (events_ != events_at_tick) last_activity = t;
      handle(Tick{});
      drain();
      settle(t);
      events_at_tick = events_;
      next_tick = t + (steady(t) ? kIdleTickS : loop.tick_s);
    }
    settle(t);
  }
  clock_.set_ms(sim_ms(loop.end));
  std::lock_guard<std::mutex> hold(lock_);
  world_.advance_to(loop.end);
}

}  // namespace orch::sim
