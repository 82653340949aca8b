#include "scheduler/spec/job_spec_json.h"

#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/model/checkpoint_dir.h"
#include "scheduler/model/launch_request_json.h"
#include "scheduler/spec/job_spec_parser.h"

namespace orch {
namespace {

// A checkpoint.dir the parser now refuses (jobs stored when it could be any path, issue 37):
// taken out of the copy the parser reads, and returned so that the job reads back as it was
// stored. Launches ignore it: such a job writes to its own directory.
std::optional<std::string> take_old_checkpoint_dir(nlohmann::json& copy) {
  auto ckpt = copy.find("checkpoint");
  if (ckpt == copy.end() || !ckpt->is_object()) return std::nullopt;
  auto dir = ckpt->find("dir");
  if (dir == ckpt->end() || !dir->is_string()) return std::nullopt;
  std::string old = dir->get<std::string>();
  if (old.empty() || normal_relative_subdir(old)) return std::nullopt;
  ckpt->erase(dir);
  return old;
}

nlohmann::json container_to_json(const ContainerSpec& c) {
  nlohmann::json out = {{"image", c.image}};
  if (!c.mounts.empty()) {
    nlohmann::json mounts = nlohmann::json::array();
    for (const auto& m : c.mounts) mounts.push_back(mount_text(m));
    out["mounts"] = mounts;
  }
  if (!c.workdir.empty()) out["workdir"] = c.workdir;
  if (!c.env.empty()) out["env"] = c.env;
  return out;
}

// workdir: (the stored form: {source, sha256, bytes}), setup: and setup_per_node:, when set.
void add_workdir_and_setup(const JobSpec& spec, nlohmann::json& out) {
  if (!spec.workdir.sha256.empty() || !spec.workdir.source.empty()) {
    nlohmann::json workdir = {{"bytes", spec.workdir.bytes}};
    if (!spec.workdir.source.empty()) workdir["source"] = spec.workdir.source;
    if (!spec.workdir.sha256.empty()) workdir["sha256"] = spec.workdir.sha256;
    out["workdir"] = workdir;
  }
  if (!spec.setup.empty()) out["setup"] = spec.setup;
  if (spec.setup_per_node) out["setup_per_node"] = true;
}

// The spec's `checkpoint:` section; the stall keys (issue 43) only where they differ from the
// defaults.
nlohmann::json checkpoint_to_json(const CheckpointSpec& c) {
  nlohmann::json checkpoint = {{"dir", c.dir}, {"resume_env", c.resume_env}};
  if (c.interval_steps) checkpoint["interval_steps"] = *c.interval_steps;
  if (c.stall_factor != CheckpointSpec{}.stall_factor) checkpoint["stall_factor"] = c.stall_factor;
  if (c.stall_min_s != CheckpointSpec{}.stall_min_s) checkpoint["stall_min_s"] = c.stall_min_s;
  // An empty checkpoint dir means "none"; the parser rejects an empty string, so leave it out.
  if (c.dir.empty()) checkpoint.erase("dir");
  const ReplicationSpec& rep = c.replicate;
  nlohmann::json replicate = {{"enabled", rep.enabled}, {"keep", rep.keep}, {"copies", rep.copies}};
  if (!rep.to.empty()) replicate["to"] = rep.to;  // empty: the scheduler chooses
  checkpoint["replicate"] = replicate;
  return checkpoint;
}

}  // namespace

nlohmann::json job_spec_to_json(const JobSpec& spec) {
  using nlohmann::json;
  json checkpoint = checkpoint_to_json(spec.checkpoint);

  json model = json::object();
  if (spec.model.parameters) model["parameters"] = *spec.model.parameters;
  if (spec.model.flops_per_token) model["flops_per_token"] = *spec.model.flops_per_token;
  if (spec.model.layers) model["layers"] = *spec.model.layers;
  if (spec.model.hidden) model["hidden"] = *spec.model.hidden;
  if (spec.model.sequence) model["sequence"] = *spec.model.sequence;

  const HealthWatchSpec& h = spec.health;
  json health = {{"startup_timeout_s", h.startup_timeout_s},
                 {"expect_progress", h.expect_progress},
                 {"heartbeat_timeout_s", h.heartbeat_timeout_s},
                 {"mfu_drop_percent", h.mfu_drop_percent},
                 {"exclude_stragglers", h.exclude_stragglers}};
  if (h.hang_after_s) health["hang_after_s"] = *h.hang_after_s;  // unset: adaptive

  const BackoffSpec& b = spec.restart.backoff;
  json out{
      {"name", spec.name},
      {"command", spec.command},
      {"env", spec.env.empty() ? json::object() : json(spec.env)},
      {"resources",
       {{"nodes", spec.nodes},
        {"gpus_per_node", spec.gpus_per_node},
        {"tasks_per_node", spec.tasks_per_node}}},
      {"checkpoint", checkpoint},
      {"model", model},
      {"restart",
       {{"max_infra_restarts", spec.restart.max_infra_restarts},
        {"max_user_restarts", spec.restart.max_user_restarts},
        {"healthy_after_s", spec.restart.healthy_after_s},
        {"backoff",
         {{"initial_s", b.initial_s}, {"max_s", b.max_s}, {"multiplier", b.multiplier}}}}},
      {"health", health},
      {"placement",
       {{"allowed", spec.allowed_clusters.empty() ? json::array() : json(spec.allowed_clusters)},
        {"preferred",
         spec.preferred_clusters.empty() ? json::array() : json(spec.preferred_clusters)},
        {"max_queue_s", spec.max_queue_s}}},
      {"datasets", spec.datasets.empty() ? json::array() : json(spec.datasets)},
  };
  // Left out when empty: the parser takes no empty name.
  if (spec.spares > 0) out["resources"]["spares"] = spec.spares;
  if (!spec.owner.empty()) out["owner"] = spec.owner;
  if (!spec.team.empty()) out["team"] = spec.team;
  if (!spec.group.empty()) out["group"] = spec.group;
  if (!spec.sweep_point.empty()) out["sweep_point"] = spec.sweep_point;
  if (!spec.secret_env.empty()) out["secret_env"] = secret_refs_to_json(spec.secret_env);
  out["priority"] = spec.priority;
  if (!spec.priority_class.empty()) out["priority_class"] = spec.priority_class;
  out["preemption"] = {{"allowed", spec.preemption.allowed},
                       {"signal", spec.preemption.signal},
                       {"grace_s", spec.preemption.grace_s}};
  if (spec.time_limit_s) out["time_limit"] = *spec.time_limit_s;
  if (spec.expected_run_s) out["placement"]["expected_run"] = *spec.expected_run_s;
  if (spec.kubernetes != PodSettings{}) out["kubernetes"] = pod_settings_to_json(spec.kubernetes);
  if (!spec.topology.empty()) out["topology"] = topology_to_json(spec.topology);
  if (!spec.shell.empty()) out["shell"] = spec.shell;
  if (!spec.container.empty()) out["container"] = container_to_json(spec.container);
  if (spec.cpus_per_task > 0) out["resources"]["cpus_per_task"] = spec.cpus_per_task;
  if (spec.memory_mb > 0) out["resources"]["memory"] = memory_mib_text(spec.memory_mb);
  if (!spec.slurm.empty()) out["slurm"] = slurm_job_options_to_json(spec.slurm);
  add_workdir_and_setup(spec, out);
  if (!spec.after.empty()) {
    json after = json::array();
    for (const auto& a : spec.after) {
      json entry = {{"job", a.job}, {"state", std::string(to_string(a.state))}};
      if (a.id > 0) entry["id"] = a.id;
      after.push_back(entry);
    }
    out["after"] = after;
  }
  return out;
}

Result<JobSpec> job_spec_from_json(const nlohmann::json& json) {
  // JSON is YAML, so the stored spec goes through the one validating parser rather than a
  // second, drifting copy of the rules. nlohmann prints doubles so that they read back
  // bit-exact, and from_chars in the parser reads them back the same way.
  try {
    if (!json.is_object()) {
      return make_error(ErrorKind::invalid, "stored job spec:1:1: the job spec is " +
                                                std::string(json.type_name()) +
                                                "; expected a JSON object");
    }
    // A reference that is not {secret: NAME} (a job stored when specs could name a file or a
    // variable of the server) is kept as retired: the job reads back, and is never launched
    // with it. The parser, which refuses those forms in a submission, does not see them.
    nlohmann::json copy = json;
    std::vector<std::string> retired;
    if (auto it = copy.find("secret_env"); it != copy.end() && it->is_object()) {
      for (const auto& [var, secret] : secret_refs_from_json(*it)) {
        if (secret.empty()) retired.push_back(var);
      }
      for (const auto& var : retired) it->erase(var);
      if (it->empty()) copy.erase(it);
    }
    const std::optional<std::string> old_dir = take_old_checkpoint_dir(copy);
    // Set by expand_sweep, not a key a submitted spec may hold: kept out of the parser's sight.
    std::string sweep_point;
    if (auto it = copy.find("sweep_point"); it != copy.end()) {
      if (it->is_string()) sweep_point = it->get<std::string>();
      copy.erase(it);
    }
    auto spec = parse_job_spec(copy.dump(1), "stored job spec");
    if (spec) {
      spec->sweep_point = std::move(sweep_point);
      for (const auto& var : retired) spec->secret_env[var] = "";
      if (old_dir) spec->checkpoint.dir = *old_dir;
    }
    return spec;
  } catch (const std::exception& e) {
    // dump() throws on invalid UTF-8 in a string.
    return make_error(ErrorKind::invalid,
                      std::string("stored job spec:1:1: cannot read the job spec (") + e.what() +
                          "); expected valid UTF-8 JSON");
  }
}

}  // namespace orch
