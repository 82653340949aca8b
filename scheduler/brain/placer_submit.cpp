// The placer at submit: a job is checked against the configuration (its team, priority, allowed
// clusters, container and Slurm options; issue 42: a job no configured cluster could ever hold
// is refused with the largest shape each cluster offers, unless it is queued anyway for a
// cluster still to come), stored (one job per point of a sweep) and placed if it fits now.
#include "scheduler/brain/placer.h"
#include "scheduler/placement/ever_fits.h"
#include "scheduler/spec/container_support.h"
#include "scheduler/spec/scheduling_section.h"
#include "scheduler/spec/slurm_job_rules.h"
#include "scheduler/spec/submission_rules.h"
#include "scheduler/spec/sweep.h"

namespace orch {

Result<BrainReply> Placer::on(const SubmitJob& e) {
  JobSpec spec = e.spec;
  // The caller's team and priority, checked here as well as at the door: a command that reaches
  // the brain another way cannot skip them.
  if (auto bound = bind_team(spec, e.submitter); !bound) return bound.error();
  if (auto allowed = check_priority(core_.scheduling, spec, e.submitter); !allowed) {
    return allowed.error();
  }
  if (!spec.priority_class.empty()) {
    std::string why;
    auto priority = resolve_priority(core_.scheduling, spec.priority_class, why);
    if (!priority) {
      Error unknown = make_error(ErrorKind::invalid, why);
      unknown.where = "priority|priority_class";
      return unknown;
    }
    spec.priority = *priority;
  }
  for (std::size_t i = 0; i < e.spec.allowed_clusters.size(); ++i) {
    const std::string& name = e.spec.allowed_clusters[i];
    if (!cluster_spec(name)) {
      std::string known;
      for (const auto& c : clusters_) {
        if (!known.empty()) known += ", ";
        known += c.name;
      }
      std::string msg = "placement.allowed names unknown cluster \"" + name + "\"";
      msg += "; configured clusters: ";
      msg += known;
      Error bad = make_error(ErrorKind::invalid, msg);
      bad.where = "placement.allowed[" + std::to_string(i) + "]";
      return bad;
    }
  }
  // `after:` (issue 45): each job it waits for resolved now; unknown jobs and cycles refused.
  if (auto resolved = holds_.resolve_after(spec); !resolved) return resolved.error();
  if (auto runs = check_container_clusters(spec, clusters_); !runs) return runs.error();
  if (auto takes = check_slurm_option_clusters(spec, clusters_); !takes) return takes.error();
  // A sweep is one job per point, all in this one transaction: all of them or none.
  const std::vector<JobSpec> points = expand_sweep(spec);
  if (auto fits = refuse_if_never_fits(points, e.submitter.queue_anyway); !fits) {
    return fits.error();
  }
  BrainReply reply;
  for (const auto& point : points) {
    const Millis now = clock_.now_ms();
    JobRow job;
    job.name = point.name;
    job.spec = point;
    job.created_ms = job.updated_ms = now;
    auto id = store_.insert_job(job);
    if (!id) return id.error();
    job.id = *id;
    std::string msg = "submitted: " + std::to_string(point.nodes) + " node(s) x " +
                      std::to_string(point.gpus_per_node) + " GPU(s)";
    if (points.size() > 1) msg += "; point of sweep " + point.group + " (" + point.command + ")";
    if (auto r = event(job.id, std::nullopt, "submitted", msg); !r) return r.error();
    if (auto r = try_place(job); !r) return r.error();
    if (reply.job_id == 0) {
      reply.job_id = job.id;
      reply.state = std::string(to_string(job.state));
    }
    reply.jobs.push_back({job.id, job.name, std::string(to_string(job.state))});
  }
  return reply;
}

Result<void> Placer::refuse_if_never_fits(const std::vector<JobSpec>& points, bool queue_anyway) {
  if (queue_anyway) return Ok{};
  auto views = cluster_views();
  if (!views) return views.error();
  for (std::size_t i = 0; i < points.size(); ++i) {
    auto never = fits_no_cluster(points[i], **views);
    if (!never) continue;
    std::string msg = *never + "; use --queue-anyway to keep it for a cluster still to come";
    if (points.size() > 1) {
      msg = "sweep point " + std::to_string(i + 1) + " (" + points[i].name + "): " + msg;
    }
    Error refused = make_error(ErrorKind::invalid, msg);
    refused.where = "resources";
    return refused;
  }
  return Ok{};
}

}  // namespace orch
