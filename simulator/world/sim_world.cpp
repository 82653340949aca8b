// The simulated fleet (sim_world.h).
#include "simulator/world/sim_world.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "scheduler/model/checkpoint_dir.h"
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
constexpr std::uint64_t kJobStream = 0x10b0'0000;

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
  if (spares < 0 || spares >= nodes) {
    return invalid(where + "spares must be at least 0 and fewer than its " + std::to_string(nodes) +
                   " nodes, got " + std::to_string(spares));
  }
  for (auto [what, v] :
       {std::pair{"restart_s", restart_s}, std::pair{"repair_s", repair_s},
        std::pair{"spare_restart_s", spare_restart_s}, std::pair{"burn_in_s", burn_in_s},
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
    : causes_(std::move(causes)),
      jobs_(std::move(jobs)),
      truth_(jobs_.size()),
      current_(jobs_.size()) {}

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
    if (!(j.drain_s >= 0) || !std::isfinite(j.drain_s)) {
      return invalid(where + "drain_s must be >= 0");
    }
    if (!(j.mtbf_s >= 0)) return invalid(where + "mtbf_s must be >= 0 (0: no failures of its own)");
    if (j.tokens_per_step < 0 || j.checkpoint_bytes < 0) {
      return invalid(where + "tokens_per_step and checkpoint_bytes must be >= 0");
    }
  }
  std::unique_ptr<SimWorld> world(new SimWorld(std::move(jobs), std::move(causes)));
  for (std::size_t ji = 0; ji < world->jobs_.size(); ++ji) {
    world->job_random_.emplace_back(seed, kJobStream + ji);
  }
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
    c.hot_spares = spec.spares;
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
  for (std::size_t r : c.live) t = std::min({t, runs_[r].completes_s, runs_[r].job_fails_s});
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
  double done_at = kNever, job_fail_at = kNever;
  std::optional<std::size_t> done, job_failed;
  for (std::size_t r : c.live) {
    if (runs_[r].completes_s < done_at) {
      done_at = runs_[r].completes_s;
      done = r;
    }
    if (runs_[r].job_fails_s < job_fail_at) {
      job_fail_at = runs_[r].job_fails_s;
      job_failed = r;
    }
  }
  const double first = std::min({fail_at, repair_at, outage_at, blip_at, done_at, job_fail_at});
  if (done && done_at == first) {
    print_until(runs_[*done], done_at);  // completes it
  } else if (job_failed && job_fail_at == first) {
    job_fails(*job_failed);
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

void SimWorld::job_fails(std::size_t ri) {
  Run& run = runs_[ri];
  const Cluster& c = clusters_[run.cluster];
  JobTruth& truth = truth_[run.job];
  const std::string cause = "job";
  ++clusters_[run.cluster].failures[cause];
  truth.interruptions.push_back(Interruption{run.job_fails_s, c.spec.name, cause, {}, {}});
  run.interruption = truth.interruptions.size() - 1;
  ExitStatus exit;
  exit.exit_code = 1;
  exit.cause = ExitCause::network_error;
  exit.detail = "the job itself failed (NCCL watchdog timeout: software or network, no node)";
  exit.last_heard_ms = static_cast<std::int64_t>(std::llround(run.job_fails_s * 1000));
  end_run(ri, run.job_fails_s, std::move(exit));
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
    if (run.draining >= 0) t = std::min(t, run.drained_s);
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
  run.granted_s = now_;
  run.ready_s = now_ + restart_for(c, truth_[run.job]);
  run.cursor = TrainingProgress{run.start_step, run.start_step, 0, run.ready_s, false};
  run.next_progress_s = run.ready_s + c.spec.progress_every_s;
  run.completes_s = advance(run.shape, run.start_step, run.ready_s).at_s;
  run.job_fails_s = job.mtbf_s > 0 ? now_ + job_random_[run.job].exponential(job.mtbf_s) : kNever;
  JobTruth& truth = truth_[run.job];
  // The job's model is now the checkpoint this run starts from, with every step it holds where
  // it was made (a checkpoint ahead of what the job had kept brings its steps back); what the
  // job had made past it is lost (steps_made - kept_steps()).
  truth.kept = run.lineage;
  current_[run.job] = ri;
  if (!truth.first_step_s) truth.first_step_s = run.ready_s;
  for (auto& i : truth.interruptions) {
    if (!i.resumed_s) i.resumed_s = run.ready_s;
  }
  return true;
}

double SimWorld::restart_for(Cluster& c, const JobTruth& truth) {
  while (!c.refills.empty() && *c.refills.begin() <= now_) {
    c.refills.erase(c.refills.begin());
    c.hot_spares = std::min(c.hot_spares + 1, c.spec.spares);
  }
  const bool resuming = std::any_of(truth.interruptions.begin(), truth.interruptions.end(),
                                    [](const Interruption& i) { return !i.resumed_s; });
  if (!resuming || c.hot_spares == 0) return c.spec.restart_s;
  --c.hot_spares;
  c.refills.insert(now_ + c.spec.burn_in_s);
  return std::min(c.spec.spare_restart_s, c.spec.restart_s);
}

void SimWorld::grant_waiting(std::size_t ci) {
  Cluster& c = clusters_[ci];
  for (std::size_t ri : c.live) {
    if (runs_[ri].nodes.empty() && !grant(runs_[ri], ri)) break;  // first come, first served
  }
}

std::vector<KeptSteps> SimWorld::lineage_of(const Copy& copy) const {
  const Run& maker = runs_[copy.run];
  std::vector<KeptSteps> steps = maker.lineage;
  if (copy.step > maker.start_step) {
    steps.push_back(KeptSteps{maker.start_step, copy.step, maker.shape.step_s,
                              clusters_[maker.cluster].spec.name});
  }
  return steps;
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
    double drain_at = kNever;
    if (run.draining >= 0) drain_at = run.drained_s;
    if (drain_at <= until && drain_at <= save_at && drain_at <= run.next_progress_s) {
      record_drain(run);
      continue;
    }
    if (save_at <= until && save_at <= run.next_progress_s) {
      run.cursor = TrainingProgress{save_step, save_step, run.cursor.saves + 1, save_at, false};
      record_save(run, save_step, save_at);
      continue;
    }
    if (run.next_progress_s <= until) {
      const TrainingProgress p =
          advance(run.shape, run.cursor.step, run.cursor.at_s, run.next_progress_s);
      print_line(run,
                 ProgressReport{p.step, job.tokens_per_step, run.shape.step_s, std::nullopt, {}});
      run.next_progress_s += clusters_[run.cluster].spec.progress_every_s;
      continue;
    }
    break;
  }
  if (t >= run.completes_s) {
    print_line(run,
               ProgressReport{
                   run.shape.total_steps, job.tokens_per_step, run.shape.step_s, std::nullopt, {}});
    ExitStatus done;
    done.exit_code = 0;
    truth_[run.job].completed_s = run.completes_s;
    end_run(static_cast<std::size_t>(&run - runs_.data()), run.completes_s, std::move(done));
  }
}

void SimWorld::print_line(Run& run, const ProgressLine& line) {
  run.output += format_progress_line(line);
  run.output += '\n';
  ++lines_printed_;
}

void SimWorld::record_save(Run& run, std::int64_t step, double save_at) {
  const SimJob& job = jobs_[run.job];
  Cluster& c = clusters_[run.cluster];
  CheckpointReport line{step, checkpoint_path(run, step), run.shape.save_s};
  if (job.drain_s > 0) {
    // Tiered whoever launched it: a policy that names no node directory gets the world's.
    const std::string node_dir =
        run.node_dir.empty() ? "/sim/local/{node}/" + job.name : run.node_dir;
    line.tier = CheckpointTier::local;
    line.node = c.nodes[run.nodes.front()].name;
    auto dir = expand_node_placeholder(node_dir, line.node);
    line.path = (dir ? *dir : node_dir) + "/step-" + std::to_string(step);
    run.draining = step;  // the newest only: a drain under way is superseded
    run.drained_s = save_at + job.drain_s;
  }
  c.copies[line.path] = Copy{run.job, step, line.tier == CheckpointTier::local,
                             static_cast<std::size_t>(&run - runs_.data())};
  print_line(run, line);
}

void SimWorld::record_drain(Run& run) {
  const std::int64_t step = run.draining;
  run.draining = -1;
  const std::string path = checkpoint_path(run, step);
  clusters_[run.cluster].copies[path] =
      Copy{run.job, step, false, static_cast<std::size_t>(&run - runs_.data())};
  CheckpointReport line{step, path, jobs_[run.job].drain_s};
  print_line(run, line);
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
    truth.gpu_seconds_held +=
        (at - run.granted_s) * static_cast<double>(run.nodes_needed) * c.spec.gpus_per_node;
    if (at > run.ready_s) {
      const TrainingProgress p = advance(run.shape, run.start_step, run.ready_s, at);
      if (p.step > run.start_step) {
        truth.steps_made += p.step - run.start_step;
        // A run the job has since left (a newer one was granted) made steps no one keeps.
        if (current_[run.job] == ri) {
          truth.kept.push_back(KeptSteps{run.start_step, p.step, run.shape.step_s, c.spec.name});
        }
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

}  // namespace orch::sim
