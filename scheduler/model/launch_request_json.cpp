#include "scheduler/model/launch_request_json.h"

namespace orch {

nlohmann::json secret_refs_to_json(const std::map<std::string, std::string>& refs) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [var, secret] : refs) {
    out[var] =
        secret.empty()
            ? nlohmann::json{{"retired", "a file or variable of the server (no longer read)"}}
            : nlohmann::json{{"secret", secret}};
  }
  return out;
}

std::map<std::string, std::string> secret_refs_from_json(const nlohmann::json& j) {
  std::map<std::string, std::string> out;
  if (!j.is_object()) return out;
  for (const auto& [var, ref] : j.items()) {
    const bool named = ref.is_object() && ref.contains("secret") && ref["secret"].is_string();
    out[var] = named ? ref["secret"].get<std::string>() : std::string();
  }
  return out;
}

namespace {

// Issue 40: the job's code and setup (LaunchRequest::code_sha256...), present only when set.
void code_to_json(const LaunchRequest& r, nlohmann::json& j) {
  if (!r.code_sha256.empty()) {
    j["code_sha256"] = r.code_sha256;
    j["code_bytes"] = r.code_bytes;
    j["code_archive"] = r.code_archive;
    j["workdir"] = r.workdir;
  }
  if (!r.setup.empty()) {
    j["setup"] = r.setup;
    j["setup_per_node"] = r.setup_per_node;
    j["setup_key"] = r.setup_key;
    j["setup_dir"] = r.setup_dir;
  }
}

// Issue 40, item 4: the job's container, present only when it has one.
void container_to_json(const ContainerSpec& c, nlohmann::json& j) {
  if (c.empty()) return;
  nlohmann::json mounts = nlohmann::json::array();
  for (const auto& m : c.mounts) mounts.push_back(mount_text(m));
  j["container"] = {{"image", c.image}, {"mounts", mounts}, {"workdir", c.workdir}, {"env", c.env}};
}

// A launch is read back from the server's own outbox: a mount that no longer reads is dropped
// rather than failing the launch (the spec reader checked each when the job was submitted).
void container_from_json(const nlohmann::json& j, ContainerSpec& c) {
  auto it = j.find("container");
  if (it == j.end() || !it->is_object()) return;
  c.image = it->value("image", std::string());
  c.workdir = it->value("workdir", std::string());
  c.env = it->value("env", std::vector<std::string>());
  for (const auto& text : it->value("mounts", std::vector<std::string>())) {
    std::string why;
    if (auto m = parse_mount(text, why)) c.mounts.push_back(*m);
  }
}

void code_from_json(const nlohmann::json& j, LaunchRequest& r) {
  r.code_sha256 = j.value("code_sha256", std::string());
  r.code_bytes = j.value("code_bytes", std::int64_t{0});
  r.code_archive = j.value("code_archive", std::string());
  r.workdir = j.value("workdir", std::string());
  r.setup = j.value("setup", std::string());
  r.setup_per_node = j.value("setup_per_node", false);
  r.setup_key = j.value("setup_key", std::string());
  r.setup_dir = j.value("setup_dir", std::string());
}

}  // namespace

nlohmann::json launch_request_to_json(const LaunchRequest& r) {
  // Field by field: nlohmann's initializer lists build every pair as an array first, and a
  // launch is written for every placement.
  nlohmann::json candidates = nlohmann::json::array();
  for (const auto& c : r.resume_candidates) {
    nlohmann::json one = nlohmann::json::object();
    one["checkpoint_id"] = c.checkpoint_id;
    one["step"] = c.step;
    one["path"] = c.path;
    // null: not listed yet (the pre-launch check only needs it there)
    one["manifest"] =
        c.manifest.files.empty() ? nlohmann::json(nullptr) : manifest_to_json(c.manifest);
    if (!c.within.empty()) one["within"] = c.within;
    if (!c.node.empty()) one["node"] = c.node;
    candidates.push_back(std::move(one));
  }
  nlohmann::json j = nlohmann::json::object();
  j["token"] = r.token;
  j["resume_candidates"] = std::move(candidates);
  j["resume_env"] = r.resume_env;
  j["job_id"] = r.job_id;
  j["attempt_no"] = r.attempt_no;
  j["job_name"] = r.job_name;
  j["command"] = r.command;
  j["env"] = r.env;
  // The references only: secret_env's values are never written anywhere.
  j["secret_refs"] = secret_refs_to_json(r.secret_refs);
  j["team"] = r.team;
  j["nodes"] = r.nodes;
  j["gpus_per_node"] = r.gpus_per_node;
  j["tasks_per_node"] = r.tasks_per_node;
  j["exclude_nodes"] = r.exclude_nodes;
  if (!r.on_node.empty()) j["on_node"] = r.on_node;
  if (!r.include_nodes.empty()) j["include_nodes"] = r.include_nodes;
  j["hang_after_s"] = r.hang_after_s;
  j["heartbeat_s"] = r.heartbeat_s;
  j["heartbeat_timeout_s"] = r.heartbeat_timeout_s;
  if (r.io_stall_after_s > 0) j["io_stall_after_s"] = r.io_stall_after_s;
  j["resume_floor_step"] =
      r.resume_floor_step ? nlohmann::json(*r.resume_floor_step) : nlohmann::json(nullptr);
  j["resume_floor_reason"] = r.resume_floor_reason;
  j["time_limit_s"] = r.time_limit_s ? nlohmann::json(*r.time_limit_s) : nlohmann::json(nullptr);
  if (r.pod != PodSettings{}) j["pod"] = pod_settings_to_json(r.pod);
  if (!r.topology.empty()) j["topology"] = topology_to_json(r.topology);
  if (!r.checkpoint_dir.empty()) j["checkpoint_dir"] = r.checkpoint_dir;
  code_to_json(r, j);
  container_to_json(r.container, j);
  if (!r.shell.empty()) j["shell"] = r.shell;
  if (r.cpus_per_task > 0) j["cpus_per_task"] = r.cpus_per_task;
  if (r.memory_mb > 0) j["memory_mb"] = r.memory_mb;
  if (!r.slurm.empty()) j["slurm"] = slurm_job_options_to_json(r.slurm);
  return j;
}

Result<LaunchRequest> launch_request_from_json(const nlohmann::json& j) {
  try {
    LaunchRequest r;
    r.token = j.at("token").get<std::string>();
    r.job_id = j.at("job_id").get<std::int64_t>();
    r.attempt_no = j.at("attempt_no").get<int>();
    r.job_name = j.at("job_name").get<std::string>();
    r.command = j.at("command").get<std::string>();
    r.env = j.at("env").get<std::map<std::string, std::string>>();
    r.secret_refs = secret_refs_from_json(j.value("secret_refs", nlohmann::json::object()));
    r.team = j.value("team", std::string());
    r.nodes = j.at("nodes").get<int>();
    r.gpus_per_node = j.at("gpus_per_node").get<int>();
    r.exclude_nodes = j.value("exclude_nodes", std::vector<std::string>{});
    r.tasks_per_node = j.value("tasks_per_node", 1);
    r.on_node = j.value("on_node", std::string());
    r.include_nodes = j.value("include_nodes", std::vector<std::string>{});
    r.hang_after_s = j.value("hang_after_s", 600.0);
    r.heartbeat_s = j.value("heartbeat_s", r.heartbeat_s);
    r.heartbeat_timeout_s = j.value("heartbeat_timeout_s", r.heartbeat_timeout_s);
    r.io_stall_after_s = j.value("io_stall_after_s", 0.0);
    r.resume_env = j.value("resume_env", r.resume_env);
    if (j.contains("resume_floor_step") && !j.at("resume_floor_step").is_null()) {
      r.resume_floor_step = j.at("resume_floor_step").get<std::int64_t>();
    }
    r.resume_floor_reason = j.value("resume_floor_reason", std::string());
    if (j.contains("time_limit_s") && !j.at("time_limit_s").is_null()) {
      r.time_limit_s = j.at("time_limit_s").get<double>();
    }
    if (j.contains("topology")) {
      auto topology = topology_from_json(j.at("topology"));
      if (!topology) return topology.error();
      r.topology = *topology;
    }
    if (j.contains("pod")) {
      auto pod = pod_settings_from_json(j.at("pod"));
      if (!pod) return pod.error();
      r.pod = std::move(*pod);
    }
    // Launches written before each job had its own checkpoint directory have none.
    r.checkpoint_dir = j.value("checkpoint_dir", std::string());
    code_from_json(j, r);
    container_from_json(j, r.container);
    r.shell = j.value("shell", std::string());
    r.cpus_per_task = j.value("cpus_per_task", 0);
    r.memory_mb = j.value("memory_mb", std::int64_t{0});
    if (j.contains("slurm")) {
      auto slurm = slurm_job_options_from_json(j.at("slurm"));
      if (!slurm) return slurm.error();
      r.slurm = std::move(*slurm);
    }
    for (const auto& c : j.value("resume_candidates", nlohmann::json::array())) {
      ResumeCandidate rc;
      rc.checkpoint_id = c.at("checkpoint_id").get<std::int64_t>();
      rc.step = c.at("step").get<std::int64_t>();
      rc.path = c.at("path").get<std::string>();
      rc.within = c.value("within", std::string());
      rc.node = c.value("node", std::string());
      if (!c.at("manifest").is_null()) {
        auto m = manifest_from_json(c.at("manifest"));
        if (!m) return m.error();
        rc.manifest = std::move(*m);
      }
      r.resume_candidates.push_back(std::move(rc));
    }
    return r;
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorKind::internal, std::string("not a launch request: ") + e.what());
  }
}

nlohmann::json probe_request_to_json(const ProbeRequest& r) {
  nlohmann::json j = {
      {"token", r.token},       {"nodes", r.nodes},         {"dir", r.dir},
      {"io_bytes", r.io_bytes}, {"compute_s", r.compute_s}, {"timeout_s", r.timeout_s}};
  const GpuProbeOptions& g = r.gpu;
  j["gpu"] = {{"nvidia_smi", g.nvidia_smi},     {"expect_gpus", g.expect_gpus},
              {"dcgm_level", g.dcgm_level},     {"dcgmi", g.dcgmi},
              {"torch_python", g.torch_python}, {"torch_s", g.torch_s}};
  return j;
}

Result<ProbeRequest> probe_request_from_json(const nlohmann::json& j) {
  try {
    ProbeRequest r;
    r.token = j.at("token").get<std::string>();
    r.nodes = j.value("nodes", std::vector<std::string>{});
    r.dir = j.value("dir", std::string());
    r.io_bytes = j.value("io_bytes", r.io_bytes);
    r.compute_s = j.value("compute_s", r.compute_s);
    r.timeout_s = j.value("timeout_s", r.timeout_s);
    // Rows queued before issue 43 have no "gpu": the defaults (no GPU options).
    const nlohmann::json g = j.value("gpu", nlohmann::json::object());
    r.gpu.nvidia_smi = g.value("nvidia_smi", r.gpu.nvidia_smi);
    r.gpu.expect_gpus = g.value("expect_gpus", r.gpu.expect_gpus);
    r.gpu.dcgm_level = g.value("dcgm_level", r.gpu.dcgm_level);
    r.gpu.dcgmi = g.value("dcgmi", r.gpu.dcgmi);
    r.gpu.torch_python = g.value("torch_python", r.gpu.torch_python);
    r.gpu.torch_s = g.value("torch_s", r.gpu.torch_s);
    return r;
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorKind::internal, std::string("not a probe request: ") + e.what());
  }
}

}  // namespace orch
