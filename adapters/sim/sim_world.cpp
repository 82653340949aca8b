// The simulated fleet (sim_world.h).
#include "adapters/sim/sim_world.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "scheduler/model/progress_line.h"

namespace orch::sim {

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// Streams of the seed other than the nodes' failures (which use the node's index).
constexpr std::uint64_t kLemonStream = 0x1e30'0000;
constexpr std::uint64_t kSlowStream = 0x5100'0000;
constexpr std::uint64_t kTraceSeedStream = 0x7ace'0000;
constexpr std::uint64_t kOutageStream = 0x0a7a'0000;
constexpr std::uint64_t kBlipStream = 0xb1a0'0000;

Error invalid(const std::string& what) {
  return make_error(ErrorKind::invalid, what);
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// `count` distinct indexes below n, drawn by a partial Fisher-Yates shuffle.
std::vector<std::size_t> pick(SimRandom& random, std::size_t n, std::size_t count) {
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  count = std::min(count, n);
  for (std::size_t i = 0; i < count; ++i) {
    const auto j = i + static_cast<std::size_t>(random.next_u64() % (n - i));
    std::swap(all[i], all[j]);
  }
  all.resize(count);
  return all;
}

std::size_t share_of(double fraction, int n) {
  return static_cast<std::size_t>(std::llround(fraction * n));
}

// A copy's SHA-256 as the simulated storage lists it: 64 hex digits that follow from the job
// and the step (FNV-1a, then splitmix64), so every faithful copy of a checkpoint lists the same.
std::string content_hash(const std::string& job, std::int64_t step) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char ch : job) h = (h ^ ch) * 1099511628211ULL;
  h ^= static_cast<std::uint64_t>(step) * 0x9E3779B97F4A7C15ULL;
  std::string hex;
  static const char* digits = "0123456789abcdef";
  for (int word = 0; word < 4; ++word) {
    h += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = h;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    for (int i = 15; i >= 0; --i) hex += digits[(z >> (i * 4)) & 0xf];
  }
  return hex;
}

}  // namespace

Result<void> SimCluster::check() const {
  const std::string where = "cluster " + name + ": ";
  if (name.empty()) return invalid("a simulated cluster needs a name");
  if (nodes < 1) return invalid(where + "nodes must be at least 1");
  if (gpus_per_node < 1) return invalid(where + "gpus_per_node must be at least 1");
  if (!(peak_flops_per_gpu > 0) || !std::isfinite(peak_flops_per_gpu)) {
    return invalid(where + "peak FLOP/s per GPU must be above 0");
  }
  if (!(mfu > 0 && mfu <= 1)) return invalid(where + "mfu must be above 0 and at most 1");
  if (auto r = law.check(); !r) return invalid(where + r.error().message);
  for (auto [what, v] :
       {std::pair{"lemon_fraction", lemon_fraction}, std::pair{"slow_fraction", slow_fraction}}) {
    if (!(v >= 0 && v <= 1)) return invalid(where + what + " must be between 0 and 1");
  }
  if (!(lemon_multiplier > 0)) return invalid(where + "lemon_multiplier must be above 0");
  if (!(slow_speed > 0 && slow_speed <= 1)) {
    return invalid(where + "slow_speed must be above 0 and at most 1");
  }
  for (auto [what, v] : {std::pair{"restart_s", restart_s}, std::pair{"repair_s", repair_s},
                         std::pair{"outage_mtbf_s", outage_mtbf_s}, std::pair{"outage_s", outage_s},
                         std::pair{"blip_mtbf_s", blip_mtbf_s}, std::pair{"blip_s", blip_s}}) {
    if (!(v >= 0) || !std::isfinite(v)) {
      return invalid(where + what + " must be a number of seconds >= 0, got " + number(v));
    }
  }
  if (!(progress_every_s > 0) || !std::isfinite(progress_every_s)) {
    return invalid(where + "progress_every_s must be above 0");
  }
  return Ok{};
}

SimWorld::SimWorld(std::vector<SimJob> jobs, CauseMix causes)
    : causes_(std::move(causes)), jobs_(std::move(jobs)), truth_(jobs_.size()) {}

Result<std::unique_ptr<SimWorld>> SimWorld::make(std::uint64_t seed,
                                                 std::vector<SimCluster> clusters,
                                                 std::vector<SimJob> jobs, CauseMix causes) {
  std::set<std::string> names;
  for (const auto& c : clusters) {
    if (auto r = c.check(); !r) return r.error();
    if (!names.insert(c.name).second) return invalid("cluster " + c.name + " is listed twice");
  }
  std::set<std::string> job_names;
  for (const auto& j : jobs) {
    const std::string where = "job " + j.name + ": ";
    if (j.name.empty()) return invalid("a simulated job needs a name");
    if (!job_names.insert(j.name).second) return invalid("job " + j.name + " is listed twice");
    if (!(j.flops_per_step > 0) || !std::isfinite(j.flops_per_step)) {
      return invalid(where + "FLOPs per step must be above 0");
    }
    if (j.total_steps < 1) return invalid(where + "total_steps must be at least 1");
    if (j.checkpoint_every < 0) return invalid(where + "checkpoint_every must be >= 0");
    if (!(j.save_s >= 0) || !std::isfinite(j.save_s)) {
      return invalid(where + "save_s must be >= 0");
    }
    if (j.tokens_per_step < 0 || j.checkpoint_bytes < 0) {
      return invalid(where + "tokens_per_step and checkpoint_bytes must be >= 0");
    }
  }
  std::unique_ptr<SimWorld> world(new SimWorld(std::move(jobs), std::move(causes)));
  for (std::size_t ci = 0; ci < clusters.size(); ++ci) {
    SimCluster& spec = clusters[ci];
    const auto n = static_cast<std::size_t>(spec.nodes);
    std::vector<SimNodeSpec> rates(n);
    SimRandom lemon_random(seed, kLemonStream + ci);
    for (std::size_t i : pick(lemon_random, n, share_of(spec.lemon_fraction, spec.nodes))) {
      rates[i].rate_multiplier = spec.lemon_multiplier;
    }
    SimRandom trace_seed(seed, kTraceSeedStream + ci);
    auto trace = FailureTrace::make(trace_seed.next_u64(), spec.law, rates, &world->causes_);
    if (!trace) return invalid("cluster " + spec.name + ": " + trace.error().message);
    Cluster c{spec, std::move(*trace), std::vector<Node>(n), SimRandom(seed, kOutageStream + ci),
              SimRandom(seed, kBlipStream + ci)};
    char name[32];
    for (std::size_t i = 0; i < n; ++i) {
      std::snprintf(name, sizeof name, "-n%04zu", i);
      c.nodes[i].name = spec.name + name;
    }
    SimRandom slow_random(seed, kSlowStream + ci);
    for (std::size_t i : pick(slow_random, n, share_of(spec.slow_fraction, spec.nodes))) {
      c.nodes[i].speed = spec.slow_speed;
    }
    c.outage_start =
        spec.outage_mtbf_s > 0 ? c.outage_random.exponential(spec.outage_mtbf_s) : kNever;
    c.outage_end = c.outage_start + spec.outage_s;
    c.blip_start = spec.blip_mtbf_s > 0 ? c.blip_random.exponential(spec.blip_mtbf_s) : kNever;
    c.blip_end = c.blip_start + spec.blip_s;
    world->clusters_.push_back(std::move(c));
  }
  return world;
}

std::optional<std::size_t> SimWorld::cluster_index(const std::string& name) const {
  for (std::size_t i = 0; i < clusters_.size(); ++i) {
    if (clusters_[i].spec.name == name) return i;
  }
  return std::nullopt;
}

// ---- time ----------------------------------------------------------------------------------

double SimWorld::next_event(std::size_t ci) const {
  const Cluster& c = clusters_[ci];
  double t = c.trace.next_at();
  if (!c.repairs.empty()) t = std::min(t, *c.repairs.begin());
  t = std::min(t, c.in_outage ? c.outage_end : c.outage_start);
  t = std::min(t, c.in_blip ? c.blip_end : c.blip_start);
  for (std::size_t r : c.live) t = std::min(t, runs_[r].completes_s);
  return t;
}

void SimWorld::advance_to(double t) {
  for (;;) {
    std::size_t which = clusters_.size();
    double when = kNever;
    for (std::size_t ci = 0; ci < clusters_.size(); ++ci) {
      const double e = next_event(ci);
      if (e < when) {
        when = e;
        which = ci;
      }
    }
    if (which == clusters_.size() || when > t) break;
    now_ = std::max(now_, when);
    apply_next_event(which);
  }
  now_ = std::max(now_, t);
}

void SimWorld::apply_next_event(std::size_t ci) {
  Cluster& c = clusters_[ci];
  // The same order as next_event's candidates, so that ties resolve the same way every run.
  const double fail_at = c.trace.next_at();
  const double repair_at = c.repairs.empty() ? kNever : double{*c.repairs.begin()};
  const double outage_at = c.in_outage ? c.outage_end : c.outage_start;
  const double blip_at = c.in_blip ? c.blip_end : c.blip_start;
  double done_at = kNever;
  std::optional<std::size_t> done;
  for (std::size_t r : c.live) {
    if (runs_[r].completes_s < done_at) {
      done_at = runs_[r].completes_s;
      done = r;
    }
  }
  const double first = std::min({fail_at, repair_at, outage_at, blip_at, done_at});
  if (done && done_at == first) {
    print_until(runs_[*done], done_at);  // completes it
  } else if (fail_at == first) {
    node_fails(ci, c.trace.next());
  } else if (repair_at == first) {
    c.repairs.erase(c.repairs.begin());
    grant_waiting(ci);
  } else if (outage_at == first) {
    if (c.in_outage) {
      c.in_outage = false;
      c.outage_start = c.outage_end + c.outage_random.exponential(c.spec.outage_mtbf_s);
      c.outage_end = c.outage_start + c.spec.outage_s;
      grant_waiting(ci);
    } else {
      c.in_outage = true;
      outage_starts(ci);
    }
  } else if (blip_at == first) {
    if (c.in_blip) {
      c.in_blip = false;
      c.blip_start = c.blip_end + c.blip_random.exponential(c.spec.blip_mtbf_s);
      c.blip_end = c.blip_start + c.spec.blip_s;
    } else {
      c.in_blip = true;
    }
  }
}

void SimWorld::node_fails(std::size_t ci, const NodeFailure& f) {
  Cluster& c = clusters_[ci];
  Node& node = c.nodes[f.node];
  const std::string cause = f.cause ? *f.cause : std::string("unknown");
  ++c.failures[cause];
  if (node.down_until < f.at_s + c.spec.repair_s) {
    if (node.down_until > f.at_s) c.repairs.erase(c.repairs.find(node.down_until));
    node.down_until = f.at_s + c.spec.repair_s;
    c.repairs.insert(node.down_until);
  }
  if (!node.held_by) return;
  const std::size_t ri = *node.held_by;
  Run& run = runs_[ri];
  JobTruth& truth = truth_[run.job];
  truth.interruptions.push_back(Interruption{f.at_s, c.spec.name, cause, {}, {}});
  run.interruption = truth.interruptions.size() - 1;
  ExitStatus exit;
  exit.node_lost = true;
  exit.failed_node = node.name;
  exit.signal = 9;
  exit.detail = "node " + node.name + " failed (" + cause + ")";
  exit.last_heard_ms = static_cast<std::int64_t>(std::llround(f.at_s * 1000));
  end_run(ri, f.at_s, std::move(exit));
}

void SimWorld::outage_starts(std::size_t ci) {
  Cluster& c = clusters_[ci];
  const std::vector<std::size_t> live(c.live.begin(), c.live.end());
  for (std::size_t ri : live) {
    Run& run = runs_[ri];
    JobTruth& truth = truth_[run.job];
    truth.interruptions.push_back(Interruption{now_, c.spec.name, "cluster outage", {}, {}});
    run.interruption = truth.interruptions.size() - 1;
    ExitStatus exit;
    exit.signal = 9;
    exit.cause = ExitCause::site_down;
    exit.detail = "cluster " + c.spec.name + " went down (outage)";
    end_run(ri, now_, std::move(exit));
  }
}

double SimWorld::next_change(std::size_t ci, double after) const {
  const Cluster& c = clusters_[ci];
  double t = next_event(ci);
  for (std::size_t ri : c.live) {
    const Run& run = runs_[ri];
    if (run.ready_s > after) t = std::min(t, run.ready_s);
    if (run.nodes.empty()) continue;
    t = std::min(t, run.next_progress_s);
    const std::int64_t every = run.shape.checkpoint_every;
    if (every > 0) {
      const std::int64_t k = (run.cursor.step / every + 1) * every;
      if (k < run.shape.total_steps) {
        t = std::min(t, run.cursor.at_s +
                            static_cast<double>(k - run.cursor.step) * run.shape.step_s +
                            run.shape.save_s);
      }
    }
  }
  return t;
}

// ---- runs ----------------------------------------------------------------------------------

bool SimWorld::grant(Run& run, std::size_t ri) {
  Cluster& c = clusters_[run.cluster];
  if (c.in_outage) return false;
  std::vector<std::size_t> picked;
  for (std::size_t i = 0;
       i < c.nodes.size() && picked.size() < static_cast<std::size_t>(run.nodes_needed); ++i) {
    const Node& n = c.nodes[i];
    if (n.held_by || n.down_until > now_ || run.exclude.count(n.name)) continue;
    picked.push_back(i);
  }
  if (picked.size() < static_cast<std::size_t>(run.nodes_needed)) return false;
  double slowest = 1;
  for (std::size_t i : picked) {
    c.nodes[i].held_by = ri;
    slowest = std::min(slowest, c.nodes[i].speed);
  }
  run.nodes = std::move(picked);
  const SimJob& job = jobs_[run.job];
  const int gpus = run.nodes_needed * c.spec.gpus_per_node;
  run.shape.step_s =
      gang_step_s(job.flops_per_step, gpus, c.spec.peak_flops_per_gpu, c.spec.mfu, slowest).value();
  run.ready_s = now_ + c.spec.restart_s;
  run.cursor = TrainingProgress{run.start_step, run.start_step, 0, run.ready_s, false};
  run.next_progress_s = run.ready_s + c.spec.progress_every_s;
  run.completes_s = advance(run.shape, run.start_step, run.ready_s).at_s;
  JobTruth& truth = truth_[run.job];
  // The job goes back to the step this run starts from: whatever it had made past it is lost.
  const std::int64_t had = truth.kept_steps();
  if (had > run.start_step) truth.steps_lost += had - run.start_step;
  while (!truth.kept.empty() && truth.kept.back().from >= run.start_step) truth.kept.pop_back();
  if (!truth.kept.empty() && truth.kept.back().to > run.start_step) {
    truth.kept.back().to = run.start_step;
  }
  if (!truth.first_step_s) truth.first_step_s = run.ready_s;
  for (auto& i : truth.interruptions) {
    if (!i.resumed_s) i.resumed_s = run.ready_s;
  }
  return true;
}

void SimWorld::grant_waiting(std::size_t ci) {
  Cluster& c = clusters_[ci];
  for (std::size_t ri : c.live) {
    if (runs_[ri].nodes.empty() && !grant(runs_[ri], ri)) break;  // first come, first served
  }
}

std::string SimWorld::checkpoint_path(const Run& run, std::int64_t step) const {
  if (!run.checkpoint_dir.empty()) return run.checkpoint_dir + "/step-" + std::to_string(step);
  return clusters_[run.cluster].spec.checkpoint_root + "/" + jobs_[run.job].name + "/step-" +
         std::to_string(step);
}

void SimWorld::print_until(Run& run, double t) {
  if (run.exited || run.nodes.empty()) return;
  const double until = std::min(t, run.completes_s);
  const SimJob& job = jobs_[run.job];
  const std::int64_t every = run.shape.checkpoint_every;
  for (;;) {
    double save_at = kNever;
    std::int64_t save_step = 0;
    if (every > 0) {
      save_step = (run.cursor.step / every + 1) * every;
      if (save_step < run.shape.total_steps) {
        save_at = run.cursor.at_s +
                  static_cast<double>(save_step - run.cursor.step) * run.shape.step_s +
                  run.shape.save_s;
      }
    }
    if (save_at <= until && save_at <= run.next_progress_s) {
      run.cursor = TrainingProgress{save_step, save_step, run.cursor.saves + 1, save_at, false};
      const std::string path = checkpoint_path(run, save_step);
      clusters_[run.cluster].copies[path] = Copy{run.job, save_step};
      run.output += format_progress_line(CheckpointReport{save_step, path, run.shape.save_s});
      run.output += '\n';
      ++lines_printed_;
      continue;
    }
    if (run.next_progress_s <= until) {
      const TrainingProgress p =
          advance(run.shape, run.cursor.step, run.cursor.at_s, run.next_progress_s);
      run.output += format_progress_line(
          ProgressReport{p.step, job.tokens_per_step, run.shape.step_s, std::nullopt, {}});
      run.output += '\n';
      ++lines_printed_;
      run.next_progress_s += clusters_[run.cluster].spec.progress_every_s;
      continue;
    }
    break;
  }
  if (t >= run.completes_s) {
    run.output += format_progress_line(ProgressReport{
        run.shape.total_steps, job.tokens_per_step, run.shape.step_s, std::nullopt, {}});
    run.output += '\n';
    ++lines_printed_;
    ExitStatus done;
    done.exit_code = 0;
    truth_[run.job].completed_s = run.completes_s;
    end_run(static_cast<std::size_t>(&run - runs_.data()), run.completes_s, std::move(done));
  }
}

void SimWorld::end_run(std::size_t ri, double at, ExitStatus exit) {
  Run& run = runs_[ri];
  if (run.exited) return;
  if (at < run.completes_s) print_until(run, at);
  run.exited = true;
  run.exit = std::move(exit);
  run.ended_s = at;
  Cluster& c = clusters_[run.cluster];
  c.live.erase(ri);
  JobTruth& truth = truth_[run.job];
  if (!run.nodes.empty()) {
    const double granted = run.ready_s - c.spec.restart_s;
    truth.gpu_seconds_held +=
        (at - granted) * static_cast<double>(run.nodes_needed) * c.spec.gpus_per_node;
    if (at > run.ready_s) {
      const TrainingProgress p = advance(run.shape, run.start_step, run.ready_s, at);
      if (p.step > run.start_step) {
        truth.kept.push_back(KeptSteps{run.start_step, p.step, run.shape.step_s, c.spec.name});
      }
    }
    for (std::size_t i : run.nodes) c.nodes[i].held_by.reset();
  }
  grant_waiting(run.cluster);
}

std::optional<std::size_t> SimWorld::run_of(std::size_t ci, const std::string& token) const {
  const auto& runs = clusters_[ci].runs;
  auto it = runs.find(token);
  if (it == runs.end()) return std::nullopt;
  return it->second;
}

// ---- what a site answers -------------------------------------------------------------------

bool SimWorld::reachable(std::size_t ci) const {
  const Cluster& c = clusters_[ci];
  return !c.in_outage && !c.in_blip;
}

SiteInventory SimWorld::inventory(std::size_t ci) const {
  const Cluster& c = clusters_[ci];
  SiteInventory inv;
  inv.nodes.reserve(c.nodes.size());
  for (const Node& n : c.nodes) {
    const bool up = n.down_until <= now_;
    inv.nodes.push_back(NodeInfo{n.name, c.spec.gpus_per_node, up,
                                 up ? std::string() : std::string("down for repair"), 0});
  }
  return inv;
}

Result<LaunchResult> SimWorld::launch(std::size_t ci, const LaunchRequest& request) {
  Cluster& c = clusters_[ci];
  if (auto known = find(ci, request.token)) {
    known->adopted = true;
    return *known;
  }
  auto job = std::find_if(jobs_.begin(), jobs_.end(),
                          [&](const SimJob& j) { return j.name == request.job_name; });
  if (job == jobs_.end()) {
    return make_error(ErrorKind::invalid,
                      "the scenario has no job named '" + request.job_name + "' to simulate");
  }
  if (request.nodes > c.spec.nodes || request.gpus_per_node > c.spec.gpus_per_node) {
    return make_error(ErrorKind::invalid, "cluster " + c.spec.name + " has " +
                                              std::to_string(c.spec.nodes) + " nodes of " +
                                              std::to_string(c.spec.gpus_per_node) + " GPUs");
  }
  Run run;
  run.token = request.token;
  run.cluster = ci;
  run.job = static_cast<std::size_t>(job - jobs_.begin());
  run.nodes_needed = request.nodes;
  run.exclude.insert(request.exclude_nodes.begin(), request.exclude_nodes.end());
  run.checkpoint_dir = request.checkpoint_dir;
  run.launched_s = now_;
  run.ready_s = kNever;
  run.completes_s = kNever;
  run.next_progress_s = kNever;
  if (auto from = request.env.find(request.resume_env); from != request.env.end()) {
    auto copy = c.copies.find(from->second);
    if (copy == c.copies.end() || copy->second.job != run.job) {
      return make_error(ErrorKind::not_found, "no checkpoint of " + job->name + " at " +
                                                  from->second + " on " + c.spec.name);
    }
    run.start_step = copy->second.step;
  }
  run.shape = TrainingShape{1, job->total_steps, job->checkpoint_every, job->save_s};
  JobTruth& truth = truth_[run.job];
  ++truth.runs;
  truth.excluded_nodes.insert(request.exclude_nodes.begin(), request.exclude_nodes.end());
  const std::size_t ri = runs_.size();
  runs_.push_back(std::move(run));
  c.runs[request.token] = ri;
  c.live.insert(ri);
  // Waits behind runs already waiting for nodes.
  bool first_waiting = true;
  for (std::size_t other : c.live) {
    if (other != ri && runs_[other].nodes.empty()) first_waiting = false;
  }
  if (first_waiting) (void)grant(runs_[ri], ri);
  return *find(ci, request.token);
}

std::optional<LaunchResult> SimWorld::find(std::size_t ci, const std::string& token) const {
  auto ri = run_of(ci, token);
  if (!ri) return std::nullopt;
  const Run& run = runs_[*ri];
  LaunchResult r;
  r.site_job_id = "sim-" + std::to_string(*ri);
  for (std::size_t i : run.nodes) r.nodes.push_back(clusters_[ci].nodes[i].name);
  r.submit_command = "simulated launch of " + jobs_[run.job].name + " on " +
                     std::to_string(run.nodes_needed) + " nodes from step " +
                     std::to_string(run.start_step);
  return r;
}

RunObservation SimWorld::observe(std::size_t ci, const std::string& token, std::uint64_t offset) {
  RunObservation obs;
  auto ri = run_of(ci, token);
  if (!ri) return obs;  // unknown
  Run& run = runs_[*ri];
  print_until(run, now_);
  obs.site_job_id = "sim-" + std::to_string(*ri);
  if (run.exited) {
    obs.phase = RunPhase::exited;
    obs.exit = run.exit;
    if (!run.seen_exit) {
      run.seen_exit = true;
      if (run.interruption) {
        auto& i = truth_[run.job].interruptions[*run.interruption];
        if (!i.seen_s) i.seen_s = now_;
      }
    }
  } else {
    // Granted nodes, it runs: the first restart_s load the model and data (the site sees a
    // running job that has not printed yet).
    obs.phase = run.nodes.empty() ? RunPhase::queued : RunPhase::running;
  }
  obs.nodes.reserve(run.nodes.size());
  for (std::size_t i : run.nodes) obs.nodes.push_back(clusters_[ci].nodes[i].name);
  offset = std::min<std::uint64_t>(offset, run.output.size());
  // Complete lines only: the output always ends with one.
  std::size_t at = offset;
  while (at < run.output.size()) {
    const std::size_t nl = run.output.find('\n', at);
    obs.new_lines.emplace_back(run.output, at, nl - at);
    at = nl + 1;
  }
  obs.next_offset = run.output.size();
  return obs;
}

void SimWorld::cancel(std::size_t ci, const std::string& token) {
  auto ri = run_of(ci, token);
  if (!ri || runs_[*ri].exited) return;
  ExitStatus stopped;
  stopped.signal = 15;
  stopped.detail = "stopped by a cancel";
  end_run(*ri, now_, std::move(stopped));
}

std::string SimWorld::read_output(std::size_t ci, const std::string& token, std::uint64_t offset,
                                  std::size_t max_bytes) {
  auto ri = run_of(ci, token);
  if (!ri) return {};
  const std::string& out = runs_[*ri].output;
  if (offset >= out.size()) return {};
  return out.substr(offset, max_bytes);
}

std::optional<Manifest> SimWorld::manifest(std::size_t ci, const std::string& path) const {
  const auto& copies = clusters_[ci].copies;
  auto it = copies.find(path);
  if (it == copies.end()) return std::nullopt;
  const SimJob& job = jobs_[it->second.job];
  Manifest m;
  m.files.push_back(ManifestFile{"", static_cast<std::uint64_t>(job.checkpoint_bytes),
                                 content_hash(job.name, it->second.step)});
  return m;
}

void SimWorld::remove(std::size_t ci, const std::string& path) {
  clusters_[ci].copies.erase(path);
}

bool SimWorld::copy(std::size_t from_c, const std::string& from, std::size_t to_c,
                    const std::string& to) {
  auto it = clusters_[from_c].copies.find(from);
  if (it == clusters_[from_c].copies.end()) return false;
  clusters_[to_c].copies[to] = it->second;
  return true;
}

std::int64_t SimWorld::copy_bytes(std::size_t ci, const std::string& path) const {
  auto it = clusters_[ci].copies.find(path);
  return it == clusters_[ci].copies.end() ? 0 : jobs_[it->second.job].checkpoint_bytes;
}

std::optional<std::string> SimWorld::newest_checkpoint(std::size_t ci,
                                                       const std::string& job) const {
  std::optional<std::string> best;
  std::int64_t best_step = -1;
  for (const auto& [path, copy] : clusters_[ci].copies) {
    if (jobs_[copy.job].name == job && copy.step > best_step) {
      best_step = copy.step;
      best = path;
    }
  }
  return best;
}

JobTruth SimWorld::truth(const std::string& job) const {
  auto it =
      std::find_if(jobs_.begin(), jobs_.end(), [&](const SimJob& j) { return j.name == job; });
  if (it == jobs_.end()) return {};
  const auto ji = static_cast<std::size_t>(it - jobs_.begin());
  JobTruth t = truth_[ji];
  for (const Cluster& c : clusters_) {
    for (std::size_t ri : c.live) {
      const Run& run = runs_[ri];
      if (run.job != ji || run.nodes.empty()) continue;
      t.gpu_seconds_held += (now_ - (run.ready_s - c.spec.restart_s)) *
                            static_cast<double>(run.nodes_needed) * c.spec.gpus_per_node;
      if (now_ <= run.ready_s) continue;
      const TrainingProgress p = advance(run.shape, run.start_step, run.ready_s, now_);
      if (p.step > run.start_step) {
        t.kept.push_back(KeptSteps{run.start_step, p.step, run.shape.step_s, c.spec.name});
      }
    }
  }
  return t;
}

}  // namespace orch::sim
