#pragma once
// A job's `slurm:` options against its cluster's `slurm:` section (issue 40, item 5): the
// cluster's defaults as SlurmJobOptions, whether the cluster's job_options rules let the job's
// values through, and the options an attempt is submitted with. Used by placement (a cluster
// that pins or forbids what the job sets is not a candidate) and the Slurm adapter (sbatch).

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/model/job_shape.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/job_spec.h"

namespace orch {

// (Header-only: the Slurm adapter's pure library links no spec parser.)

// The cluster's partition, account, qos, reservation, constraint and exclusive.
SlurmJobOptions cluster_slurm_options(const SlurmSpec& slurm);

// Why the cluster refuses the job's options, or "" when it takes them: the first option the
// job sets that the cluster forbids ("slurm.qos is forbidden on this cluster"), or pins to
// another value ("slurm.account is pinned to proj-a on this cluster, the job asks for proj-b").
std::string slurm_options_refused(const SlurmSpec& cluster, const SlurmJobOptions& job);

// The options an attempt is submitted with: the job's over the cluster's, except those the
// cluster pins or forbids (the cluster's value stands).
SlurmJobOptions effective_slurm_options(const SlurmSpec& cluster, const SlurmJobOptions& job);

// At submit: the job sets slurm options and every cluster it may run on (placement.allowed, else
// all) is a Slurm cluster that refuses them (slurm_options_refused). The error, at "slurm",
// names each cluster and why. Clusters of other providers ignore a job's slurm: section.
inline Result<void> check_slurm_option_clusters(const JobSpec& job,
                                                const std::vector<ClusterSpec>& clusters);

// slurm.job_options values: "allowed", "pinned", "forbidden".
std::string_view to_string(SlurmOptionRule rule);

namespace detail {

inline SlurmOptionRule rule_of(const SlurmSpec& cluster, std::string_view name) {
  auto it = cluster.job_options.find(std::string(name));
  return it == cluster.job_options.end() ? SlurmOptionRule::allowed : it->second;
}

}  // namespace detail

inline std::string_view to_string(SlurmOptionRule rule) {
  switch (rule) {
    case SlurmOptionRule::allowed:
      return "allowed";
    case SlurmOptionRule::pinned:
      return "pinned";
    case SlurmOptionRule::forbidden:
      return "forbidden";
  }
  return "allowed";
}

inline SlurmJobOptions cluster_slurm_options(const SlurmSpec& s) {
  SlurmJobOptions o;
  o.partition = s.partition;
  o.account = s.account;
  o.qos = s.qos;
  o.reservation = s.reservation;
  o.constraint = s.constraint;
  if (s.exclusive) o.exclusive = true;
  return o;
}

inline std::string slurm_options_refused(const SlurmSpec& cluster, const SlurmJobOptions& job) {
  const SlurmJobOptions own = cluster_slurm_options(cluster);
  for (std::string_view name : kSlurmJobOptionNames) {
    const std::string asked = slurm_option_value(job, name);
    if (asked.empty()) continue;
    const std::string key = "slurm." + std::string(name);
    switch (detail::rule_of(cluster, name)) {
      case SlurmOptionRule::allowed:
        break;
      case SlurmOptionRule::forbidden:
        return key + " is forbidden on this cluster (the job sets it to " + asked + ")";
      case SlurmOptionRule::pinned: {
        std::string mine = slurm_option_value(own, name);
        if (name == "exclusive" && mine.empty()) mine = "false";
        if (asked == mine) break;
        return key + " is pinned to " + (mine.empty() ? "the site's default" : mine) +
               " on this cluster, the job asks for " + asked;
      }
    }
  }
  return "";
}

inline SlurmJobOptions effective_slurm_options(const SlurmSpec& cluster,
                                               const SlurmJobOptions& job) {
  SlurmJobOptions allowed = job;
  if (detail::rule_of(cluster, "partition") != SlurmOptionRule::allowed) allowed.partition.clear();
  if (detail::rule_of(cluster, "account") != SlurmOptionRule::allowed) allowed.account.clear();
  if (detail::rule_of(cluster, "qos") != SlurmOptionRule::allowed) allowed.qos.clear();
  if (detail::rule_of(cluster, "reservation") != SlurmOptionRule::allowed)
    allowed.reservation.clear();
  if (detail::rule_of(cluster, "constraint") != SlurmOptionRule::allowed)
    allowed.constraint.clear();
  if (detail::rule_of(cluster, "exclusive") != SlurmOptionRule::allowed) allowed.exclusive.reset();
  return merge_slurm_options(cluster_slurm_options(cluster), allowed);
}

inline Result<void> check_slurm_option_clusters(const JobSpec& job,
                                                const std::vector<ClusterSpec>& clusters) {
  if (job.slurm.empty()) return Ok{};
  std::string why_not;
  for (const ClusterSpec& c : clusters) {
    const auto& allowed = job.allowed_clusters;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), c.name) == allowed.end()) {
      continue;
    }
    const std::string why = c.provider == "slurm" ? slurm_options_refused(c.slurm, job.slurm) : "";
    if (why.empty()) return Ok{};
    why_not += (why_not.empty() ? "" : "; ") + c.name + ": " + why;
  }
  if (why_not.empty()) return Ok{};  // no cluster at all: placement says so
  Error bad = make_error(ErrorKind::invalid,
                         "slurm: no cluster this job may run on takes its slurm options (" +
                             why_not + "); drop those options or ask an administrator");
  bad.where = "slurm";
  return bad;
}

}  // namespace orch
