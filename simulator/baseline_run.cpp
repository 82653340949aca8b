// The baselines over the simulated world (baseline_run.h).
#include "simulator/baseline_run.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "adapters/sim/sim_site.h"
#include "simulator/sim_clock.h"

namespace orch::sim {

namespace {

// The job and where it runs, as the baseline's controller keeps them.
class Controller {
 public:
  Controller(const Scenario& s, SimWorld& world, std::mutex& lock, bool failover)
      : s_(s), world_(world), lock_(lock), failover_(failover) {
    for (std::size_t i = 0; i < s.clusters.size(); ++i) {
      sites_.push_back(std::make_unique<SimSite>(world, lock, i, kSimEpochMs));
      const SimCluster& c = s.clusters[i];
      if (c.nodes >= s.job_nodes && c.gpus_per_node >= s.job_gpus_per_node) fits_.push_back(i);
    }
    cluster_ = fits_.front();  // the parser made sure one fits
  }

  double poll_every() const { return failover_ ? kFailoverPollS : s_.poll_s; }
  std::size_t cluster() const { return cluster_; }
  bool done() const { return done_; }
  std::int64_t events() const { return events_; }

  // One poll at simulated second t.
  void poll(double t) {
    ++events_;
    cancel_abandoned();
    if (!token_) {
      launch(t);
      return;
    }
    auto obs = sites_[cluster_]->observe(*token_, offset_);
    if (!obs) {
      if (!silent_since_) silent_since_ = t;
      if (failover_ && t - *silent_since_ >= kFailoverUnreachableS) move_on(t);
      return;
    }
    silent_since_.reset();
    offset_ = obs->next_offset;
    if (obs->phase == RunPhase::exited && obs->exit && obs->exit->exit_code == 0) {
      done_ = true;
      return;
    }
    if (obs->phase == RunPhase::exited || obs->phase == RunPhase::unknown) {
      token_.reset();
      if (failover_) cluster_ = next_cluster();
      launch(t);
    }
  }

  // When the controller next needs to look, beyond what the world will change.
  std::optional<double> deadline() const {
    if (!token_ || (failover_ && silent_since_)) {
      return silent_since_ ? *silent_since_ + kFailoverUnreachableS : 0.0;
    }
    return std::nullopt;
  }

 private:
  std::size_t next_cluster() const {
    for (std::size_t k = 0; k < fits_.size(); ++k) {
      if (fits_[k] == cluster_) return fits_[(k + 1) % fits_.size()];
    }
    return fits_.front();
  }

  void move_on(double t) {
    abandoned_.insert({cluster_, *token_});
    token_.reset();
    silent_since_.reset();
    cluster_ = next_cluster();
    launch(t);
  }

  void cancel_abandoned() {
    for (auto it = abandoned_.begin(); it != abandoned_.end();) {
      it = sites_[it->first]->cancel(it->second) ? abandoned_.erase(it) : std::next(it);
    }
  }

  void launch(double t) {
    ++events_;
    LaunchRequest r;
    r.token = "baseline-" + std::to_string(++launches_);
    r.job_name = s_.job.name;
    r.attempt_no = launches_;
    r.nodes = s_.job_nodes;
    r.gpus_per_node = s_.job_gpus_per_node;
    std::optional<std::string> from;
    {
      std::lock_guard<std::mutex> hold(lock_);
      from = world_.newest_checkpoint(cluster_, s_.job.name);
    }
    if (from) r.env[r.resume_env] = *from;
    auto launched = sites_[cluster_]->launch(r);
    if (!launched) {
      if (!silent_since_) silent_since_ = t;
      return;  // tried again at the next poll (failover-only moves on after its grace)
    }
    token_ = r.token;
    offset_ = 0;
  }

  const Scenario& s_;
  SimWorld& world_;
  std::mutex& lock_;
  bool failover_;
  std::vector<std::unique_ptr<SimSite>> sites_;
  std::vector<std::size_t> fits_;
  std::size_t cluster_ = 0;
  std::optional<std::string> token_;
  std::uint64_t offset_ = 0;
  std::optional<double> silent_since_;
  std::set<std::pair<std::size_t, std::string>> abandoned_;
  int launches_ = 0;
  std::int64_t events_ = 0;
  bool done_ = false;
};

}  // namespace

Result<RunOutcome> run_baseline(const Scenario& scenario, std::uint64_t seed,
                                std::string_view policy) {
  const bool failover = policy == kPolicyFailoverOnly;
  if (!failover && policy != kPolicyRestartInPlace) {
    return make_error(ErrorKind::invalid, "no baseline named \"" + std::string(policy) + "\"");
  }
  const auto wall_start = std::chrono::steady_clock::now();
  auto causes = CauseMix::make(scenario.causes);
  if (!causes) return causes.error();
  auto world = SimWorld::make(seed, scenario.clusters, {scenario.job}, *causes);
  if (!world) return world.error();
  SimWorld& w = **world;
  std::mutex lock;
  Controller controller(scenario, w, lock, failover);

  const double end = scenario.seconds();
  const double every = controller.poll_every();
  double last = -1;
  while (!controller.done()) {
    double change = w.next_change(controller.cluster(), std::max(last, 0.0));
    if (auto d = controller.deadline()) change = std::min(change, *d);
    const double t = next_poll(change, last, every);
    if (t > end) break;
    {
      std::lock_guard<std::mutex> hold(lock);
      w.advance_to(t);
    }
    controller.poll(t);
    last = t;
  }
  RunOutcome out;
  out.policy = std::string(policy);
  out.seed = seed;
  out.simulated_s = end;
  {
    std::lock_guard<std::mutex> hold(lock);
    w.advance_to(end);
    out.truth = w.truth(scenario.job.name);
  }
  out.events = controller.events();
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return out;
}

}  // namespace orch::sim
