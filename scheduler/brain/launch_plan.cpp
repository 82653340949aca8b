#include "scheduler/brain/launch_plan.h"

#include <algorithm>
#include <cmath>

#include "scheduler/brain/brain_text.h"
#include "scheduler/brain/io_stall.h"
#include "scheduler/common/text.h"
#include "scheduler/lifecycle/hang_policy.h"
#include "scheduler/lifecycle/job_stats.h"
#include "scheduler/model/checkpoint_dir.h"
#include "scheduler/model/launch_contract.h"
#include "scheduler/model/workdir.h"

namespace orch {

const AttemptRow* carrier(const std::vector<AttemptRow>& attempts) {
  for (auto it = attempts.rbegin(); it != attempts.rend(); ++it) {
    // A hung attempt, one stopped for a straggler or one moved off a long queue was asked to
    // stop too, but it carried the job until then.
    if (it->cause == ExitCause::hang || it->cause == ExitCause::straggler ||
        it->cause == ExitCause::queue_timeout) {
      return &*it;
    }
    if (!it->cancel_requested && it->cause != ExitCause::cancelled) return &*it;
  }
  return attempts.empty() ? nullptr : &attempts.back();
}

// The time part keeps tokens unique even when a state directory is thrown away while a site
// still holds old run directories.
std::string attempt_token(JobId job, int attempt_no, Millis now) {
  return "orch-" + std::to_string(job) + "-" + std::to_string(attempt_no) + "-" +
         brain_text::base36(static_cast<std::uint64_t>(now));
}

PlacementRequest placement_request(const JobRow& job, const std::vector<AttemptRow>& attempts) {
  PlacementRequest req;
  req.job = &job.spec;
  if (!attempts.empty()) req.run_started_ms = attempts.front().started_ms;
  if (const AttemptRow* last = carrier(attempts)) {
    // The site could not start it (or not all of a gang in time, or kept it queued past
    // max_queue_s): try elsewhere first.
    if (last->cause == ExitCause::launch_failed || last->cause == ExitCause::lost ||
        last->cause == ExitCause::gang_timeout || last->cause == ExitCause::queue_timeout) {
      req.avoid_cluster = last->cluster;
    } else {
      req.previous_cluster = last->cluster;
    }
    // The node that failed first when the site named it; else every node of the attempt. A
    // confirmed straggler is left out the same way.
    // A GPU fault the live watch saw (issue 43) names its node: left out the same way.
    const bool gpu_fault = last->cause == ExitCause::gpu_xid || last->cause == ExitCause::gpu_ecc;
    if (last->cause == ExitCause::node_lost ||
        ((last->cause == ExitCause::straggler || gpu_fault) && !last->failed_node.empty())) {
      req.avoid_nodes =
          last->failed_node.empty() ? last->nodes : std::vector<std::string>{last->failed_node};
    }
    req.may_take_spares = last->cause == ExitCause::node_lost || gpu_fault;
  }
  return req;
}

namespace {

AttemptRow new_attempt(const JobRow& job, int no, const ClusterSpec& site,
                       const ResumeCandidate* resume, Millis now) {
  AttemptRow a;
  a.job_id = job.id;
  a.no = no;
  a.cluster = site.name;
  a.token = attempt_token(job.id, no, now);
  a.gpus = job.spec.total_gpus();
  a.started_ms = now;
  // A resumed job's backoff ended here (the restart policy's part of its recovery).
  if (no > 1 && job.next_attempt_ms) a.due_ms = std::min(*job.next_attempt_ms, now);
  const HangLimits hang = hang_limits_for(job.spec.health);
  a.hang_after_ms = hang.hang_after_ms;
  a.startup_timeout_ms = hang.startup_timeout_ms;
  a.hang_watch = hang.watch;
  a.checkpoint_dir = job_checkpoint_dir(site.checkpoints_dir(), job.id);
  if (resume != nullptr) {
    a.resumed_from_step = resume->step;
    a.resumed_from_path = resume->path;
  }
  return a;
}

// What the job writes its checkpoints under: its own directory, or the subdirectory of it its
// spec's checkpoint.dir names. An absolute checkpoint.dir (specs stored before it was refused)
// names nothing: the job gets its own directory.
std::string launch_checkpoint_dir(const std::string& job_dir, const std::string& spec_dir) {
  if (spec_dir.empty()) return job_dir;
  auto sub = normal_relative_subdir(spec_dir);
  return sub ? job_dir + "/" + *sub : job_dir;
}

// Issue 40: the job's code and setup at this site (scheduler/model/workdir.h). ORCH_WORKDIR
// names the tree every task starts in.
void add_code(LaunchRequest& launch, const JobSpec& spec, const ClusterSpec& site) {
  if (!spec.workdir.sha256.empty()) {
    launch.code_sha256 = spec.workdir.sha256;
    launch.code_bytes = spec.workdir.bytes;
    launch.code_archive = code_archive_path(site.storage_root, spec.workdir.sha256);
    launch.workdir = code_tree_path(site.storage_root, spec.workdir.sha256);
    launch.env["ORCH_WORKDIR"] = launch.workdir;
  }
  if (!spec.setup.empty()) {
    launch.setup = spec.setup;
    launch.setup_per_node = spec.setup_per_node;
    launch.setup_key = setup_key(site.name, spec.workdir.sha256, spec.setup, spec.container.image);
    launch.setup_dir = setup_dir_path(site.storage_root, launch.setup_key);
  }
}

LaunchRequest launch_request(const LaunchPlanInput& in, const AttemptRow& a,
                             const ResumeCandidate* resume) {
  const JobSpec& spec = in.job->spec;
  LaunchRequest launch;
  launch.token = a.token;
  launch.job_id = a.job_id;
  launch.attempt_no = a.no;
  launch.job_name = in.job->name;
  launch.command = spec.command;
  launch.env = spec.env;
  launch.secret_refs = spec.secret_env;
  launch.team = spec.team;
  if (!in.site->checkpoint_root.empty()) {
    launch.env["ORCH_CHECKPOINT_ROOT"] = in.site->checkpoint_root;
  }
  launch.checkpoint_dir = launch_checkpoint_dir(a.checkpoint_dir, spec.checkpoint.dir);
  launch.env["ORCH_CHECKPOINT_DIR"] = launch.checkpoint_dir;
  // Each node's own directory for the fast tier; its agent fills in "{node}" and creates it.
  if (!in.site->node_local_root.empty()) {
    launch.env["ORCH_LOCAL_CHECKPOINT_DIR"] =
        node_local_dir_template(in.site->node_local_root, a.job_id);
    // The drain to shared storage under the cluster's transfer cap, unless the job sets its own.
    if (in.site->data.bwlimit_mb_s > 0 && launch.env.count("ORCH_DRAIN_BYTES_PER_S") == 0) {
      launch.env["ORCH_DRAIN_BYTES_PER_S"] =
          std::to_string(std::llround(in.site->data.bwlimit_mb_s * 1e6));
    }
  }
  for (const auto& [k, v] : in.data_env) launch.env[k] = v;
  // The site worker checks the candidates against their manifests just before the launch and
  // sets the variable to the first that matches (LaunchCompleted says which).
  launch.resume_candidates = in.candidates;
  launch.resume_floor_step = in.resume_floor_step;
  launch.resume_floor_reason = in.resume_floor_reason;
  launch.resume_env = spec.checkpoint.resume_env;
  if (resume != nullptr) launch.env[spec.checkpoint.resume_env] = resume->path;
  launch.nodes = spec.nodes;
  launch.gpus_per_node = spec.gpus_per_node;
  launch.tasks_per_node = spec.tasks_per_node;
  // The agent's own hang record follows a fixed limit only; the brain judges adaptive ones.
  launch.hang_after_s = spec.health.hang_after_s.value_or(0.0);
  launch.heartbeat_timeout_s = spec.health.heartbeat_timeout_s;
  launch.heartbeat_s = heartbeat_interval_s(spec.health.heartbeat_timeout_s);
  launch.io_stall_after_s = io_stall_after_s(spec.checkpoint, in.save_times_s);
  launch.exclude_nodes = in.exclude_nodes;
  // A gang that takes hot spares keeps its surviving nodes: survivors first, then the spares.
  for (const auto* list : {&in.survivors, &in.spares}) {
    for (const auto& n : *list) {
      if (static_cast<int>(launch.include_nodes.size()) < spec.nodes) {
        launch.include_nodes.push_back(n);
      }
    }
  }
  launch.time_limit_s = spec.time_limit_s;
  launch.pod = spec.kubernetes;
  launch.topology = spec.topology;
  add_code(launch, spec, *in.site);
  launch.shell = spec.shell;
  launch.container = spec.container;
  launch.cpus_per_task = spec.cpus_per_task;
  launch.memory_mb = spec.memory_mb;
  launch.slurm = spec.slurm;
  return launch;
}

// The candidates the launch can read: a copy on one node's own disk only for a one-node job (its
// one node reads it; a gang's other nodes could not) and only on a node the launch may use.
std::vector<ResumeCandidate> readable_candidates(const LaunchPlanInput& in) {
  std::vector<ResumeCandidate> out;
  for (const ResumeCandidate& c : in.candidates) {
    const bool excluded = std::find(in.exclude_nodes.begin(), in.exclude_nodes.end(), c.node) !=
                          in.exclude_nodes.end();
    // A launch onto hot spares runs where the spares are, not where an old copy lies.
    if (!c.node.empty() && (in.job->spec.nodes != 1 || excluded || !in.spares.empty())) continue;
    out.push_back(c);
  }
  return out;
}

}  // namespace

LaunchPlan plan_launch(const LaunchPlanInput& given) {
  LaunchPlanInput in = given;
  in.candidates = readable_candidates(given);
  const ResumeCandidate* resume = in.candidates.empty() ? nullptr : &in.candidates.front();
  LaunchPlan plan;
  plan.attempt =
      new_attempt(*in.job, static_cast<int>(in.attempts->size()) + 1, *in.site, resume, in.now);
  if (const AttemptRow* previous = carrier(*in.attempts)) {
    plan.previous = *previous;
    plan.previous->steps_lost = steps_lost_between(*previous, plan.attempt.resumed_from_step);
  }
  plan.launch = launch_request(in, plan.attempt, resume);
  plan.from_the_start = resume == nullptr;
  plan.spares = in.spares;
  plan.placed_message =
      "attempt " + std::to_string(plan.attempt.no) + " placed on " + plan.attempt.cluster;
  if (resume != nullptr) {
    plan.placed_message +=
        " resuming from step " + std::to_string(resume->step) + " (" + resume->path + ")";
  } else {
    plan.placed_message += " from the start";
    // A job that saved checkpoints yet starts over says why: none has a good copy here.
    if (in.saved_before) {
      plan.placed_message += " (no checkpoint has a good copy at " + plan.attempt.cluster + ")";
    }
  }
  if (!in.spares.empty()) {
    plan.placed_message +=
        "; on hot spare" + std::string(in.spares.size() > 1 ? "s " : " ") + join(in.spares, ", ") +
        (in.survivors.empty() ? std::string()
                              : " with its surviving nodes " + join(in.survivors, ", "));
  }
  return plan;
}

std::vector<std::string> surviving_nodes(const std::vector<AttemptRow>& attempts,
                                         const std::string& cluster,
                                         const std::vector<std::string>& unusable) {
  std::vector<std::string> out;
  const AttemptRow* last = carrier(attempts);
  if (last == nullptr || last->cluster != cluster) return out;
  for (const auto& n : last->nodes) {
    if (std::find(unusable.begin(), unusable.end(), n) == unusable.end()) out.push_back(n);
  }
  return out;
}

}  // namespace orch
