// The simulated fleet as its sites see it (sim_world.h): inventories, launches, observations,
// output, cancels and the checkpoint copies each site holds. The world itself (construction,
// time, runs) is sim_world.cpp.
#include <algorithm>
#include <limits>
#include <string>

#include "simulator/world/sim_world.h"

namespace orch::sim {

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

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
  if (auto dir = request.env.find("ORCH_LOCAL_CHECKPOINT_DIR"); dir != request.env.end()) {
    run.node_dir = dir->second;
  }
  run.launched_s = now_;
  run.ready_s = kNever;
  run.completes_s = kNever;
  run.next_progress_s = kNever;
  run.job_fails_s = kNever;
  if (auto from = request.env.find(request.resume_env); from != request.env.end()) {
    auto copy = c.copies.find(from->second);
    if (copy == c.copies.end() || copy->second.job != run.job) {
      return make_error(ErrorKind::not_found, "no checkpoint of " + job->name + " at " +
                                                  from->second + " on " + c.spec.name);
    }
    run.start_step = copy->second.step;
    run.lineage = lineage_of(copy->second);
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
    if (jobs_[copy.job].name == job && !copy.on_node && copy.step > best_step) {
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
      t.gpu_seconds_held +=
          (now_ - run.granted_s) * static_cast<double>(run.nodes_needed) * c.spec.gpus_per_node;
      if (now_ <= run.ready_s) continue;
      const TrainingProgress p = advance(run.shape, run.start_step, run.ready_s, now_);
      if (p.step <= run.start_step) continue;
      t.steps_made += p.step - run.start_step;
      if (current_[ji] == ri) {
        t.kept.push_back(KeptSteps{run.start_step, p.step, run.shape.step_s, c.spec.name});
      }
    }
  }
  t.steps_lost = t.steps_made - t.kept_steps();
  return t;
}

}  // namespace orch::sim
