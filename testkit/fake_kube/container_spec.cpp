#include "testkit/fake_kube/container_spec.h"

#include <cstdlib>
#include <filesystem>

#include "testkit/fake_kube/kube_json.h"
#include "testkit/fake_kube/secrets.h"

namespace orch::fake_kube {
namespace {

using nlohmann::json;
using Env = std::vector<std::pair<std::string, std::string>>;

// metadata.labels['key'] -> key, for the labels/annotations field paths.
std::string bracket_key(const std::string& path, const std::string& prefix) {
  if (path.rfind(prefix, 0) != 0 || path.size() < prefix.size() + 3) return "";
  std::string key = path.substr(prefix.size());
  if (key.front() != '[' || key.back() != ']') return "";
  key = key.substr(1, key.size() - 2);
  if (key.size() >= 2 && key.front() == '\'' && key.back() == '\'') {
    key = key.substr(1, key.size() - 2);
  }
  return key;
}

std::string field_value(const json& pod, const std::string& path) {
  if (path == "metadata.name") return string_at(pod, {"metadata", "name"});
  if (path == "metadata.namespace") return string_at(pod, {"metadata", "namespace"});
  if (path == "metadata.uid") return string_at(pod, {"metadata", "uid"});
  if (path == "spec.nodeName") return string_at(pod, {"spec", "nodeName"});
  if (path == "spec.serviceAccountName") {
    return string_at(pod, {"spec", "serviceAccountName"}, "default");
  }
  if (path == "status.podIP" || path == "status.hostIP") return "127.0.0.1";
  if (auto k = bracket_key(path, "metadata.labels"); !k.empty()) {
    return string_at(at_path(pod, {"metadata", "labels"}), {k.c_str()});
  }
  if (auto k = bracket_key(path, "metadata.annotations"); !k.empty()) {
    return string_at(at_path(pod, {"metadata", "annotations"}), {k.c_str()});
  }
  return "";
}

void set_env(Env& env, const std::string& name, const std::string& value) {
  for (auto& [n, v] : env) {
    if (n == name) {
      v = value;
      return;
    }
  }
  env.emplace_back(name, value);
}

// The container's env after the pod's own variables; "" or the CreateContainerConfigError
// message of a secretKeyRef that cannot be resolved.
std::string add_container_env(const json& pod, const json& container, const SecretLookup& secrets,
                              Env& env) {
  const json& env_list = at_path(container, {"env"});
  if (!env_list.is_array()) return "";
  const std::string ns = string_at(pod, {"metadata", "namespace"});
  for (const json& e : env_list) {
    const std::string name = string_at(e, {"name"});
    if (name.empty()) continue;
    const json& secret_ref = at_path(e, {"valueFrom", "secretKeyRef"});
    if (secret_ref.is_object()) {
      const auto secret = secrets ? secrets(string_at(secret_ref, {"name"})) : std::nullopt;
      SecretKeyValue v = secret_key_value(secret, secret_ref, ns);
      if (!v.error.empty()) return v.error;
      if (v.value) set_env(env, name, *v.value);
      continue;
    }
    const std::string field = string_at(e, {"valueFrom", "fieldRef", "fieldPath"});
    set_env(
        env, name,
        field.empty() ? expand_references(string_at(e, {"value"}), env) : field_value(pod, field));
  }
  return "";
}

}  // namespace

std::string expand_references(const std::string& text, const Env& env) {
  const auto lookup = [&](const std::string& name) -> const std::string* {
    for (const auto& [n, v] : env) {
      if (n == name) return &v;
    }
    return nullptr;
  };
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '$') {  // $$ -> $
      out += '$';
      ++i;
      continue;
    }
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '(') {
      const auto close = text.find(')', i + 2);
      const std::string* value =
          close == std::string::npos ? nullptr : lookup(text.substr(i + 2, close - i - 2));
      if (value) {
        out += *value;
        i = close;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

json first_container(const json& pod) {
  const json& containers = at_path(pod, {"spec", "containers"});
  return containers.is_array() && !containers.empty() ? containers[0] : json::object();
}

ContainerLaunch container_launch(const json& pod, const json& container, const std::string& pod_dir,
                                 const std::string& log_path, int api_port,
                                 const SecretLookup& secrets, const ImageMap* images) {
  ContainerLaunch launch;
  launch.private_mounts = private_mounts(pod, container, pod_dir);

  Env env;
  const char* host_path = std::getenv("PATH");
  set_env(env, "PATH", host_path ? host_path : "/usr/local/bin:/usr/bin:/bin");
  set_env(env, "HOSTNAME",
          string_at(pod, {"spec", "hostname"}, string_at(pod, {"metadata", "name"})));
  set_env(env, "HOME", pod_dir);
  set_env(env, "KUBERNETES_SERVICE_HOST", "127.0.0.1");
  set_env(env, "KUBERNETES_SERVICE_PORT", std::to_string(api_port));
  set_env(env, "FAKE_KUBE_POD_DIR", pod_dir);
  const std::size_t own = env.size();  // the fake's own variables come first
  launch.config_error = add_container_env(pod, container, secrets, env);
  if (!launch.config_error.empty()) return launch;
  for (std::size_t i = own; i < env.size(); ++i) {
    env[i].second = rewrite_private_mounts(env[i].second, launch.private_mounts);
  }

  std::vector<std::string> argv;
  for (const char* part : {"command", "args"}) {
    const json& list = at_path(container, {part});
    if (!list.is_array()) continue;
    for (const json& a : list) {
      if (!a.is_string()) continue;
      argv.push_back(rewrite_private_mounts(expand_references(a.get<std::string>(), env),
                                            launch.private_mounts));
    }
  }
  const std::string mapped =
      images ? mapped_path(*images, string_at(container, {"image"})) : std::string();
  if (!mapped.empty()) {
    launch.error = resolve_in_image(mapped, argv);
    if (!launch.error.empty()) return launch;
  } else if (at_path(container, {"command"}).is_null()) {
    launch.error =
        "the fake API server has no images: the container needs a command (it runs as a local "
        "process)";
    return launch;
  }
  std::string search_path;
  for (const auto& [n, v] : env) {
    if (n == "PATH") search_path = v;
  }
  const std::string exe = argv.empty() ? "" : find_executable(argv[0], search_path);
  if (exe.empty()) {
    launch.error =
        "failed to create containerd task: failed to create shim task: OCI runtime create "
        "failed: runc create failed: unable to start container process: exec: \"" +
        (argv.empty() ? std::string() : argv[0]) +
        "\": executable file not found in $PATH: unknown";
    return launch;
  }
  argv[0] = exe;

  std::string cwd = pod_dir;
  const std::string working_dir =
      rewrite_private_mounts(string_at(container, {"workingDir"}), launch.private_mounts);
  std::error_code ec;
  if (!working_dir.empty() && std::filesystem::is_directory(working_dir, ec)) cwd = working_dir;

  launch.process.argv = std::move(argv);
  for (const auto& [n, v] : env) launch.process.env.push_back(n + "=" + v);
  launch.process.cwd = cwd;
  launch.process.log_path = log_path;
  return launch;
}

}  // namespace orch::fake_kube
