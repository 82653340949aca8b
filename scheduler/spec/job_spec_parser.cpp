#include "scheduler/spec/job_spec_parser.h"
#include "scheduler/spec/after_section.h"
#include "scheduler/spec/job_shape_section.h"
#include "scheduler/spec/pod_settings_section.h"
#include "scheduler/spec/topology_section.h"

#include "scheduler/spec/container_section.h"
#include "scheduler/spec/sweep.h"
#include "scheduler/spec/workdir_section.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <exception>
#include <string>

#include "scheduler/common/utf8.h"
#include "scheduler/model/checkpoint_dir.h"
#include "scheduler/model/launch_limits.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {
namespace {

using yaml::MapView;
using yaml::NumberRange;

// The command is one argument of /bin/sh -c and each env entry one "NAME=value" string of the
// attempt's environment: execve refuses either beyond MAX_ARG_STRLEN, and orchestrate's own
// variables would silently replace the job's.
void check_process_strings(const MapView& job, const JobSpec& spec) {
  yaml::Reader& r = job.reader();
  if (r.failed()) return;
  if (spec.command.size() > limits::kMaxArgBytes) {
    r.fail(job.value_position("command"),
           "\"command\" is " + std::to_string(spec.command.size()) + " bytes long",
           "at most " + std::to_string(limits::kMaxArgBytes) +
               " bytes (what one argument of /bin/sh -c can carry); put a longer script in a "
               "file and run that");
    return;
  }
  const yaml::Field* env = job.find("env");
  if (!env || !env->value.IsMap()) return;
  for (auto it = env->value.begin(); it != env->value.end(); ++it) {
    const std::string& name = it->first.Scalar();
    const std::size_t size = name.size() + 1 + it->second.Scalar().size();
    if (limits::is_reserved_env(name)) {
      r.fail(yaml::position_of(it->first),
             "env sets " + name + ", which orchestrate sets itself for every attempt",
             "another name (orchestrate sets " + std::string(limits::kReservedEnv[0]) +
                 ", ORCH_JOB_ID, ORCH_GPUS ... and " + std::string(limits::kReservedEnvPrefix) +
                 "<NAME>)");
      return;
    }
    if (size > limits::kMaxArgBytes) {
      r.fail(yaml::position_of(it->second),
             "\"env." + name + "\" is " + std::to_string(size) + " bytes as NAME=value",
             "at most " + std::to_string(limits::kMaxArgBytes) +
                 " bytes (what one environment string can carry)");
      return;
    }
  }
}

void read_resources(const MapView& job, JobSpec& spec) {
  MapView res =
      job.child("resources", "resources",
                {"nodes", "gpus_per_node", "tasks_per_node", "spares", "cpus_per_task", "memory"},
                "a map such as {nodes: 2, gpus_per_node: 8, tasks_per_node: 8}");
  res.read_int("nodes", spec.nodes, 1, limits::kMaxNodes, "an integer such as 2");
  res.read_int("gpus_per_node", spec.gpus_per_node, 1, INT_MAX, "an integer such as 8");
  res.read_int("tasks_per_node", spec.tasks_per_node, 1, limits::kMaxTasksPerNode,
               "an integer such as 1 (one process per node) or 8 (one per GPU)");
  res.read_int("spares", spec.spares, 0, limits::kMaxNodes,
               "hot spare nodes its cluster holds for it, such as 2");
  read_resource_shape(res, spec);
  // Every adapter hands the job ORCH_GPUS = nodes x gpus_per_node as an int.
  if (!res.reader().failed() && static_cast<long long>(spec.nodes) * spec.gpus_per_node > INT_MAX) {
    res.reader().fail(res.position(),
                      "nodes x gpus_per_node is " +
                          std::to_string(static_cast<long long>(spec.nodes) * spec.gpus_per_node) +
                          " GPUs",
                      "at most " + std::to_string(INT_MAX) + " GPUs in all");
  }
}

void read_replicate(const MapView& ckpt, JobSpec& spec) {
  MapView rep = ckpt.child("replicate", "checkpoint.replicate", {"enabled", "keep", "copies", "to"},
                           "a map such as {enabled: true, keep: 3, copies: 2, to: beta}");
  ReplicationSpec& r = spec.checkpoint.replicate;
  rep.read_bool("enabled", r.enabled, "true or false");
  rep.read_int("keep", r.keep, 1, INT_MAX, "a count of checkpoints such as 3");
  rep.read_int("copies", r.copies, 1, 8, "a count of sites such as 2 (1: no off-site copy)");
  rep.read_string("to", r.to, yaml::kName, "a cluster name such as beta");
  if (!rep.reader().failed() && rep.has("to") && r.copies < 2) {
    rep.reader().fail(rep.key_position("to"),
                      "\"to\" names an off-site cluster, but \"copies\" is 1 (no off-site copy)",
                      "copies: 2 or more with \"to\", or no \"to\"");
  }
}

void read_checkpoint(const MapView& job, JobSpec& spec) {
  MapView ckpt =
      job.child("checkpoint", "checkpoint",
                {"dir", "resume_env", "interval_steps", "replicate", "stall_factor", "stall_min_s"},
                "a map such as {dir: run1, interval_steps: 50}");
  ckpt.read_string("dir", spec.checkpoint.dir, yaml::kNonEmpty, "a subdirectory such as run1");
  // The job's checkpoints live in a directory the server gives it ($ORCH_CHECKPOINT_DIR, issue
  // 37): "dir" may only name a subdirectory of it. Paths elsewhere are never registered.
  if (!ckpt.reader().failed() && ckpt.has("dir")) {
    if (auto sub = normal_relative_subdir(spec.checkpoint.dir); !sub) {
      ckpt.reader().fail(ckpt.value_position("dir"),
                         "\"dir\" must be a subdirectory of the job's own checkpoint directory: " +
                             sub.error().message +
                             "; each job writes its checkpoints under $ORCH_CHECKPOINT_DIR, which "
                             "orchestrate creates for it at every site",
                         "a relative path such as run1, or no \"dir\"");
    } else {
      spec.checkpoint.dir = std::move(*sub);
    }
  }
  ckpt.read_string("resume_env", spec.checkpoint.resume_env, yaml::kEnvVarName,
                   "an environment variable name such as ORCH_RESUME_FROM");
  if (!ckpt.reader().failed() && limits::is_reserved_env(spec.checkpoint.resume_env)) {
    ckpt.reader().fail(ckpt.value_position("resume_env"),
                       "\"resume_env\" names " + spec.checkpoint.resume_env +
                           ", which orchestrate sets itself for every attempt",
                       "another name such as ORCH_RESUME_FROM");
  }
  ckpt.read_int("interval_steps", spec.checkpoint.interval_steps, 1, INT_MAX,
                "a step count such as 500");
  ckpt.read_number("stall_factor", spec.checkpoint.stall_factor, {0.0, false, 1000.0},
                   "a factor of the median save time such as 5 (0: no bound from the launch)");
  if (!ckpt.reader().failed() && spec.checkpoint.stall_factor > 0 &&
      spec.checkpoint.stall_factor <= 1) {
    ckpt.reader().fail(ckpt.value_position("stall_factor"),
                       "\"stall_factor\" must be above 1: every other save would be a stall",
                       "a factor such as 5, or 0 for no bound");
  }
  ckpt.read_number("stall_min_s", spec.checkpoint.stall_min_s, {0.0, true, 86400.0},
                   "seconds such as 60");
  read_replicate(ckpt, spec);
}

// Dataset names: 1 to 64 letters, digits, ".", "_" or "-", each listed once.
void read_datasets(MapView& job, JobSpec& spec) {
  job.read_string_list("datasets", spec.datasets, yaml::kName,
                       "a list of dataset names such as [imagenet, c4]");
  const yaml::Field* field = job.find("datasets");
  if (job.reader().failed() || !field) return;
  for (std::size_t i = 1; i < spec.datasets.size(); ++i) {
    const auto first = std::find(spec.datasets.begin(), spec.datasets.end(), spec.datasets[i]);
    if (first == spec.datasets.begin() + static_cast<std::ptrdiff_t>(i)) continue;
    const auto j = static_cast<std::size_t>(first - spec.datasets.begin());
    job.reader().fail(yaml::position_of(field->value[i]),
                      "dataset \"" + spec.datasets[i] + "\" is listed twice in \"datasets\"",
                      "each dataset once (first at line " +
                          std::to_string(yaml::position_of(field->value[j]).line) + ")");
    return;
  }
}

void read_model(const MapView& job, JobSpec& spec) {
  MapView model =
      job.child("model", "model", {"parameters", "flops_per_token", "layers", "hidden", "sequence"},
                "a map such as {parameters: 7.0e9} or {flops_per_token: 4.2e10}");
  const NumberRange positive{0.0, true};
  model.read_number("parameters", spec.model.parameters, positive,
                    "a parameter count such as 7.0e9");
  model.read_number("flops_per_token", spec.model.flops_per_token, positive,
                    "FLOPs per token such as 4.2e10");
  model.read_int("layers", spec.model.layers, 1, INT_MAX, "a layer count such as 32");
  model.read_int("hidden", spec.model.hidden, 1, INT_MAX, "a hidden size such as 4096");
  model.read_int("sequence", spec.model.sequence, 1, INT_MAX, "a sequence length such as 4096");
  if (model.reader().failed()) return;

  // Cross-field rules run only on values that parsed, so they never echo an earlier error.
  if (model.has("parameters") && model.has("flops_per_token")) {
    model.reader().fail(model.key_position("flops_per_token"),
                        "give either \"parameters\" or \"flops_per_token\" in model, not both",
                        "one way to size the model");
    return;
  }
  const int attention_keys = model.has("layers") + model.has("hidden") + model.has("sequence");
  if (attention_keys > 0 && !model.has("parameters")) {
    model.reader().fail(model.position(),
                        "\"layers\", \"hidden\" and \"sequence\" need \"parameters\" in model",
                        "\"parameters\" alongside them, or only \"flops_per_token\"");
  } else if (attention_keys > 0 && attention_keys < 3) {
    model.reader().fail(model.position(),
                        "\"layers\", \"hidden\" and \"sequence\" must be given together in model",
                        "all three (for the attention term) or none");
  }
}

void read_restart(const MapView& job, JobSpec& spec) {
  MapView restart =
      job.child("restart", "restart",
                {"max_infra_restarts", "max_user_restarts", "backoff", "healthy_after_s"},
                "a map such as {max_infra_restarts: 10, max_user_restarts: 0}");
  restart.read_int("max_infra_restarts", spec.restart.max_infra_restarts, 0, INT_MAX,
                   "a count such as 10");
  restart.read_int("max_user_restarts", spec.restart.max_user_restarts, 0, INT_MAX,
                   "a count such as 0");
  restart.read_number("healthy_after_s", spec.restart.healthy_after_s,
                      {0.0, false, limits::kMaxDurationS},
                      "seconds such as 1800 (an attempt that ran this long made progress)");
  MapView backoff =
      restart.child("backoff", "restart.backoff", {"initial_s", "max_s", "multiplier"},
                    "a map such as {initial_s: 10, max_s: 600, multiplier: 2}");
  BackoffSpec& b = spec.restart.backoff;
  const NumberRange seconds{0.0, false, limits::kMaxDurationS};
  backoff.read_number("initial_s", b.initial_s, seconds, "seconds such as 10 (at most a year)");
  backoff.read_number("max_s", b.max_s, seconds, "seconds such as 600 (at most a year)");
  backoff.read_number("multiplier", b.multiplier, {1.0, false}, "a factor such as 2");
  if (!backoff.reader().failed() && b.max_s < b.initial_s) {
    const char* at = backoff.has("max_s") ? "max_s" : "initial_s";
    backoff.reader().fail(backoff.value_position(at),
                          "\"max_s\" (" + yaml::format_number(b.max_s) +
                              ") is less than \"initial_s\" (" + yaml::format_number(b.initial_s) +
                              ")",
                          "max_s >= initial_s");
  }
}

// A duration in seconds where 0 means never: a positive value under a millisecond would read as
// never downstream (the agent counts milliseconds), so it is refused rather than rounded.
void check_positive_or_zero(MapView& health, std::string_view key, double value) {
  if (health.reader().failed() || value == 0 || value >= limits::kMinPositiveSeconds) return;
  health.reader().fail(health.value_position(key),
                       "\"" + std::string(key) + "\" is " + yaml::format_number(value) +
                           ", less than a millisecond, which would read as never",
                       "0 for never, or at least 0.001 seconds");
}

void read_health(const MapView& job, JobSpec& spec) {
  MapView health = job.child("health", "health",
                             {"hang_after_s", "startup_timeout_s", "expect_progress",
                              "heartbeat_timeout_s", "mfu_drop_percent", "exclude_stragglers"},
                             "a map such as {hang_after_s: 600, mfu_drop_percent: 10}");
  HealthWatchSpec& h = spec.health;
  // orchestrate-agent run --hang-after-s takes these values and no others.
  health.read_number("hang_after_s", h.hang_after_s, {0.0, false, limits::kMaxHangAfterS},
                     "seconds such as 600 (0: never; at most 30 days; unset: adaptive)");
  if (h.hang_after_s) check_positive_or_zero(health, "hang_after_s", *h.hang_after_s);
  health.read_number("startup_timeout_s", h.startup_timeout_s, {0.0, true, limits::kMaxHangAfterS},
                     "seconds such as 1800 (at most 30 days)");
  health.read_bool("expect_progress", h.expect_progress, "true or false");
  health.read_bool("exclude_stragglers", h.exclude_stragglers, "true or false");
  health.read_number("heartbeat_timeout_s", h.heartbeat_timeout_s,
                     {0.0, false, limits::kMaxHangAfterS},
                     "seconds such as 30 (0: never judge heartbeats)");
  check_positive_or_zero(health, "heartbeat_timeout_s", h.heartbeat_timeout_s);
  health.read_number("mfu_drop_percent", h.mfu_drop_percent, {0.0, true},
                     "a percentage such as 10");
  if (!health.reader().failed() && h.mfu_drop_percent >= 100) {
    health.reader().fail(
        health.value_position("mfu_drop_percent"),
        "\"mfu_drop_percent\" must be below 100, got " + yaml::format_number(h.mfu_drop_percent),
        "a percentage such as 10");
  }
}

// A duration: seconds as a number, or a number with one unit (s, m, h, d) as a string, from 1
// second to 365 days (`time_limit:`, `placement.expected_run:`).
void read_duration(const MapView& map, const std::string& key, std::optional<double>& out) {
  constexpr std::string_view kExpected =
      "seconds such as 3600, or a duration such as \"90m\", \"2h\" or \"1d\" (at most 365 days)";
  constexpr double kMaxS = 365 * 86'400.0;
  const yaml::Field* field = map.find(key);
  if (map.reader().failed() || !field || field->value.IsNull()) return;
  const YAML::Node& v = field->value;
  std::optional<double> seconds = yaml::scalar_to_number(v);
  if (!seconds && v.IsScalar() && !v.Scalar().empty()) {
    const std::string& text = v.Scalar();
    const char unit = text.back();
    const double scale = unit == 's'   ? 1
                         : unit == 'm' ? 60
                         : unit == 'h' ? 3600
                         : unit == 'd' ? 86'400
                                       : 0;
    double n = 0;
    const char* end = text.data() + text.size() - 1;
    auto [p, ec] = std::from_chars(text.data(), end, n);
    if (scale > 0 && ec == std::errc() && p == end && std::isfinite(n)) seconds = n * scale;
  }
  if (!seconds) {
    map.reader().fail(map.value_position(key),
                      "\"" + key + "\" must be a duration, got " + yaml::describe(v), kExpected);
    return;
  }
  if (*seconds < 1 || *seconds > kMaxS) {
    map.reader().fail(map.value_position(key),
                      "\"" + key + "\" must be from 1 second to 365 days, got " +
                          yaml::format_number(*seconds) + " s",
                      kExpected);
    return;
  }
  out = *seconds;
}

void read_placement(const MapView& job, JobSpec& spec) {
  MapView placement =
      job.child("placement", "placement", {"allowed", "preferred", "max_queue_s", "expected_run"},
                "a map such as {allowed: [alpha, beta], preferred: [alpha]}");
  placement.read_number("max_queue_s", spec.max_queue_s, yaml::NumberRange{0.0, false, 604800.0},
                        "seconds such as 120 (0: never move a queued attempt)");
  read_duration(placement, "expected_run", spec.expected_run_s);
  placement.read_string_list("allowed", spec.allowed_clusters, yaml::kName,
                             "a list of cluster names such as [alpha, beta]");
  placement.read_string_list("preferred", spec.preferred_clusters, yaml::kName,
                             "a list of cluster names such as [alpha]");
  if (placement.reader().failed() || spec.allowed_clusters.empty()) return;
  const auto& allowed = spec.allowed_clusters;
  const yaml::Field* preferred = placement.find("preferred");
  for (std::size_t i = 0; preferred && i < spec.preferred_clusters.size(); ++i) {
    const std::string& name = spec.preferred_clusters[i];
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
    std::vector<std::string_view> names(allowed.begin(), allowed.end());
    placement.reader().fail(yaml::position_of(preferred->value[i]),
                            "preferred cluster \"" + name + "\" is not in \"allowed\"",
                            "a subset of allowed: " + yaml::join(names, ", "));
    return;
  }
}

// One value of secret_env: {secret: NAME}, a secret an administrator registered (`orchestrate
// secret set`, or the clusters file's `secrets:`). The forms that named a file or a variable of
// the server ({file: ...}, {env: ...}) are refused: a user could name any file the server can
// read (its admin token, its SSH keys) and receive it in the job's environment.
bool read_secret_ref(yaml::Reader& r, const YAML::Node& value, const std::string& var,
                     std::string& out) {
  const std::string context = "secret_env." + var;
  MapView ref(r, value, context, {"secret", "file", "env"}, "{secret: NAME}");
  if (r.failed()) return false;
  for (const char* old_form : {"file", "env"}) {
    if (!ref.has(old_form)) continue;
    r.fail(ref.key_position(old_form),
           context + " names a " + (old_form == std::string("file") ? "file" : "variable") +
               " of the server; a job may only name a secret an administrator granted to its "
               "team",
           "{secret: NAME}, after an administrator runs `orchestrate secret set NAME "
           "--from-file F --teams TEAM` (orchestrate secret list shows the names)");
    return false;
  }
  ref.require("secret", "secret: the name of a registered secret");
  ref.read_string("secret", out, yaml::kName, "a secret's name, such as hf-token");
  return !r.failed();
}

// secret_env: {NAME: {secret: SECRET}}; a name may be neither one of env's nor one orchestrate
// sets.
void read_secret_env(const MapView& job, JobSpec& spec) {
  yaml::Reader& r = job.reader();
  const yaml::Field* field = job.find("secret_env");
  if (r.failed() || !field || field->value.IsNull()) return;
  constexpr std::string_view kExample =
      "a map such as {WANDB_API_KEY: {secret: wandb}, HF_TOKEN: {secret: hf-token}}";
  if (!field->value.IsMap()) {
    r.fail(job.value_position("secret_env"), "\"secret_env\" must be a map", kExample);
    return;
  }
  for (auto it = field->value.begin(); it != field->value.end() && !r.failed(); ++it) {
    const YAML::Node k = it->first;
    const YAML::Node v = it->second;
    const std::string name = k.IsScalar() ? k.Scalar() : "";
    if (!yaml::kEnvVarName.valid(name)) {
      r.fail(yaml::position_of(k),
             "a key of \"secret_env\" must be " + std::string(yaml::kEnvVarName.must), kExample);
      return;
    }
    if (limits::is_reserved_env(name) || spec.env.count(name)) {
      r.fail(
          yaml::position_of(k),
          "secret_env sets " + name +
              (spec.env.count(name) ? ", which env sets too" : ", which orchestrate sets itself"),
          "a name that only secret_env sets");
      return;
    }
    std::string secret;
    if (!read_secret_ref(r, v, name, secret)) return;
    spec.secret_env[name] = secret;
  }
}

// `priority:` an integer, or the name of a priority class (resolved by the brain at submit);
// `priority_class:` the name alone (a stored spec keeps both: the class and what it resolved to).
void read_priority(MapView& job, JobSpec& spec) {
  constexpr std::string_view kExpected =
      "an integer such as 500, or a priority class of the clusters file such as hero";
  job.read_string("priority_class", spec.priority_class, yaml::kName, kExpected);
  const yaml::Field* field = job.find("priority");
  if (job.reader().failed() || !field) return;
  const YAML::Node& v = field->value;
  if (v.IsScalar()) {
    const std::string& text = v.Scalar();
    long long n = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec == std::errc() && p == text.data() + text.size()) {
      if (n < -kMaxPriority || n > kMaxPriority) {
        job.reader().fail(job.value_position("priority"),
                          "\"priority\" must be from " + std::to_string(-kMaxPriority) + " to " +
                              std::to_string(kMaxPriority) + ", got " + text,
                          kExpected);
        return;
      }
      spec.priority = static_cast<int>(n);
      return;
    }
    if (yaml::is_name(text)) {
      if (!spec.priority_class.empty() && spec.priority_class != text) {
        job.reader().fail(job.value_position("priority"),
                          "\"priority\" names class " + text + " but \"priority_class\" names " +
                              spec.priority_class,
                          "one class");
        return;
      }
      spec.priority_class = text;
      return;
    }
  }
  job.reader().fail(job.value_position("priority"),
                    "\"priority\" must be an integer or a class name, got " + yaml::describe(v),
                    kExpected);
}

void read_preemption(const MapView& job, JobSpec& spec) {
  MapView p = job.child("preemption", "preemption", {"allowed", "signal", "grace_s"},
                        "a map such as {signal: USR1, grace_s: 300}");
  PreemptionSpec& out = spec.preemption;
  p.read_bool("allowed", out.allowed, "true (it may be preempted) or false");
  p.read_string("signal", out.signal, yaml::kNonEmpty, "USR1, USR2, INT or HUP");
  p.read_number("grace_s", out.grace_s, yaml::NumberRange{0.0, false, 86400.0},
                "seconds such as 300 (0: stop at once)");
  if (p.reader().failed() || !p.has("signal")) return;
  std::string sig = out.signal;
  if (sig.rfind("SIG", 0) == 0) sig = sig.substr(3);
  if (!is_save_signal(sig)) {
    p.reader().fail(p.value_position("signal"),
                    "preemption.signal must be a signal the agent passes on to the job, got \"" +
                        out.signal + "\"",
                    "USR1, USR2, INT or HUP (TERM is what stops it)");
    return;
  }
  out.signal = sig;
}

void read_job(yaml::Reader& reader, const YAML::Node& root, JobSpec& spec) {
  MapView job(reader, root, "job", {"name",       "command",        "env",
                                    "resources",  "checkpoint",     "model",
                                    "restart",    "health",         "placement",
                                    "datasets",   "team",           "owner",
                                    "secret_env", "priority",       "priority_class",
                                    "preemption", "group",          "sweep",
                                    "time_limit", "kubernetes",     "workdir",
                                    "setup",      "setup_per_node", "shell",
                                    "slurm",      "container",      "topology",
                                    "after"},
              "a map with at least \"name\" and \"command\"");
  if (reader.failed()) return;
  job.require("name", "a job name such as toy-gpt");
  job.require("command", "a shell command such as \"python train.py\"");
  job.read_string("name", spec.name, yaml::kName, "a name such as toy-gpt");
  job.read_string("command", spec.command, yaml::kNonEmpty,
                  "a shell command such as \"python train.py\"");
  job.read_string_map("env", spec.env, yaml::kEnvVarName, "a map such as {LR: \"3e-4\"}");
  job.read_string("team", spec.team, yaml::kName, "a team name such as vision");
  job.read_string("group", spec.group, yaml::kName, "a group name such as lr-ablation");
  // Read so that a stored spec reads back; the server replaces it with the submitter's name.
  job.read_string("owner", spec.owner, yaml::kName, "a user name such as alice");
  check_process_strings(job, spec);
  read_secret_env(job, spec);
  read_resources(job, spec);
  read_checkpoint(job, spec);
  read_model(job, spec);
  read_restart(job, spec);
  read_health(job, spec);
  read_placement(job, spec);
  read_datasets(job, spec);
  read_priority(job, spec);
  read_preemption(job, spec);
  read_duration(job, "time_limit", spec.time_limit_s);
  read_sweep(job, spec);
  read_shell_and_slurm(job, spec);
  read_workdir_and_setup(job, spec);
  read_container(job, spec.container);
  read_topology(job, spec.topology);
  read_after(job, spec);
  if (job.has("kubernetes")) {
    MapView pod =
        job.child("kubernetes", "kubernetes", pod_setting_keys(),
                  "a map such as {image: nvcr.io/nvidia/pytorch:24.05-py3, shm_size: 64Gi}");
    if (!reader.failed()) read_pod_settings(pod, spec.kubernetes);
  }
}

}  // namespace

Result<JobSpec> parse_job_spec(std::string_view yaml_text, std::string_view source_name) {
  try {
    auto root = yaml::load_document(yaml_text, source_name,
                                    "a job spec: a map with at least \"name\" and \"command\"");
    if (!root) return root.error();
    yaml::Reader reader(source_name);
    JobSpec spec;
    read_job(reader, *root, spec);
    if (reader.failed()) return reader.error();
    return spec;
  } catch (const std::exception& e) {
    // yaml-cpp may throw from node access on inputs we did not foresee; a bad spec must
    // never take the server down, so it becomes an ordinary error.
    return make_error(ErrorKind::invalid, to_valid_utf8(source_name) +
                                              ":1:1: could not read the "
                                              "job spec (" +
                                              to_valid_utf8(e.what()) + "); expected a job spec");
  }
}

}  // namespace orch
