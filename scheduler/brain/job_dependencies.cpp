// The dependencies' other half (job_holds.h): `after:` resolved and checked at submit, where a
// dependent may run, and ORCH_AFTER_<NAME>_CHECKPOINT at its site.
#include <algorithm>

#include "scheduler/brain/job_holds.h"
#include "scheduler/spec/after_section.h"

namespace orch {
namespace {

bool is_id(const std::string& s) {
  return !s.empty() && s.size() < 19 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Error refuse(std::size_t i, const std::string& msg) {
  Error e = make_error(ErrorKind::invalid, "after[" + std::to_string(i) + "]: " + msg);
  e.where = "after[" + std::to_string(i) + "]";
  return e;
}

}  // namespace

Result<void> JobHolds::resolve_after(JobSpec& spec) {
  std::map<std::string, std::size_t> env_names;
  for (std::size_t i = 0; i < spec.after.size(); ++i) {
    AfterSpec& a = spec.after[i];
    std::optional<JobId> id;
    if (is_id(a.job)) {
      id = std::stoll(a.job);
    } else {
      auto named = store_.newest_job_named(a.job);
      if (!named) return named.error();
      id = *named;
    }
    auto up = id ? store_.job(*id) : Result<std::optional<JobRow>>(std::optional<JobRow>());
    if (!up) return up.error();
    if (!*up && a.job == spec.name) {
      return refuse(i, "a cycle: job " + spec.name + " would wait for itself (no earlier job is " +
                           "named " + a.job + "); name a job submitted before it");
    }
    if (!*up) {
      return refuse(i, "no job " + std::string(is_id(a.job) ? "" : "named ") + a.job +
                           "; name a job submitted before this one, by its name or id "
                           "(orchestrate job list shows them)");
    }
    const JobRow& row = **up;
    const std::string who = "job " + std::to_string(row.id) + " (" + row.name + ")";
    if (a.state == AfterState::succeeded &&
        (row.state == JobState::failed || row.state == JobState::cancelled)) {
      return refuse(i, who + " already " + std::string(to_string(row.state)) +
                           ": it can no longer succeed; wait for it to end (state: ended) or "
                           "name another job");
    }
    const std::string env = after_checkpoint_env(row.name);
    if (auto [it, fresh] = env_names.emplace(env, i); !fresh) {
      return refuse(i, who + " gives the same variable as after[" + std::to_string(it->second) +
                           "] (" + env + "); wait for jobs of different names");
    }
    a.id = row.id;
  }
  return Ok{};
}

Result<std::map<std::string, std::string>> JobHolds::newest_verified(JobId job) {
  std::map<std::string, std::string> out;
  auto ckpts = store_.checkpoints_with_copies(job);
  if (!ckpts) return ckpts.error();
  for (auto it = ckpts->rbegin(); it != ckpts->rend() && out.empty(); ++it) {
    auto copies = store_.replicas_of_checkpoint(it->id);
    if (!copies) return copies.error();
    for (const auto& r : *copies) {
      if (r.state == ReplicaState::verified && on_shared_storage(r)) out[r.cluster] = r.path;
    }
  }
  return out;
}

Result<std::vector<std::string>> JobHolds::checkpoint_sites(const JobRow& job) {
  std::optional<std::vector<std::string>> sites;
  for (const AfterSpec& a : job.spec.after) {
    auto copies = newest_verified(a.id);
    if (!copies) return copies.error();
    if (copies->empty()) continue;
    std::vector<std::string> here;
    for (const auto& [cluster, path] : *copies) {
      if (!sites || std::count(sites->begin(), sites->end(), cluster)) here.push_back(cluster);
    }
    sites = std::move(here);
  }
  return sites.value_or(std::vector<std::string>());
}

Result<bool> JobHolds::narrow_to_checkpoints(const JobRow& job, JobSpec& out) {
  if (job.spec.after.empty()) return false;
  auto sites = checkpoint_sites(job);
  if (!sites) return sites.error();
  const auto& allowed = job.spec.allowed_clusters;
  std::vector<std::string> keep;
  for (const auto& s : *sites) {
    if (allowed.empty() || std::count(allowed.begin(), allowed.end(), s)) keep.push_back(s);
  }
  if (keep.empty()) return false;
  out = job.spec;
  out.allowed_clusters = std::move(keep);
  return true;
}

Result<void> JobHolds::fill_after_env(const JobRow& job, const std::string& cluster,
                                      std::map<std::string, std::string>& env) {
  for (const AfterSpec& a : job.spec.after) {
    auto up = store_.job(a.id);
    if (!up) return up.error();
    if (!*up) continue;
    auto copies = newest_verified(a.id);
    if (!copies) return copies.error();
    if (auto it = copies->find(cluster); it != copies->end()) {
      env[after_checkpoint_env((*up)->name)] = it->second;
    }
  }
  return Ok{};
}

}  // namespace orch
