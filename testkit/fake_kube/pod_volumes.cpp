#include "testkit/fake_kube/pod_volumes.h"

#include <filesystem>
#include <system_error>

#include "testkit/fake_kube/kube_json.h"

namespace orch::fake_kube {
namespace {

namespace fs = std::filesystem;

// The directory a volume of the pod stands for; "" and `error` set when it has none.
std::string volume_dir(const json& volume, const json& pod, const std::string& pod_dir,
                       const std::string& state_dir, std::string& error) {
  const std::string name = string_at(volume, {"name"});
  std::error_code ec;
  if (volume.contains("persistentVolumeClaim")) {
    const std::string claim = string_at(volume, {"persistentVolumeClaim", "claimName"});
    if (claim.empty()) {
      error = "volume \"" + name + "\" has no claimName";
      return "";
    }
    std::string dir = claim_dir(state_dir, string_at(pod, {"metadata", "namespace"}), claim);
    fs::create_directories(dir, ec);
    return dir;
  }
  if (volume.contains("hostPath")) {
    std::string path = string_at(volume, {"hostPath", "path"});
    const std::string type = string_at(volume, {"hostPath", "type"});
    if (type == "DirectoryOrCreate") fs::create_directories(path, ec);
    if ((type == "Directory" || type == "DirectoryOrCreate") && !fs::is_directory(path)) {
      error = "hostPath type check failed: " + path + " is not a directory";
      return "";
    }
    return path;
  }
  if (volume.contains("emptyDir")) {
    if (string_at(volume, {"emptyDir", "medium"}) == "Memory") return "/dev/shm";
    std::string dir = pod_dir + "/volumes/" + name;
    fs::create_directories(dir, ec);
    return dir;
  }
  error = "volume \"" + name + "\" is of a kind the fake does not serve";
  return "";
}

// An emptyDir of the pod's own (a link would be shared by every pod): its path is rewritten.
bool is_private(const json& volume) {
  return volume.contains("emptyDir") && string_at(volume, {"emptyDir", "medium"}) != "Memory";
}

const json* volume_named(const json& pod, const std::string& name) {
  const json& volumes = at_path(pod, {"spec", "volumes"});
  const json* found = nullptr;
  if (volumes.is_array()) {
    for (const json& v : volumes) {
      if (string_at(v, {"name"}) == name) found = &v;
    }
  }
  return found;
}

bool path_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-' || c == '/' || c == '~';
}

// Makes one container's mounts; "" or why not.
std::string mount_container(const json& pod, const json& container, const std::string& pod_dir,
                            const std::string& state_dir) {
  const json& container_mounts =
      container.contains("volumeMounts") ? container["volumeMounts"] : json::array();
  for (const json& m : container_mounts) {
    const std::string name = string_at(m, {"name"});
    const std::string path = string_at(m, {"mountPath"});
    const json* volume = volume_named(pod, name);
    if (volume == nullptr) return "volumeMount \"" + name + "\" names no volume of the pod";
    std::string error;
    const std::string dir = volume_dir(*volume, pod, pod_dir, state_dir, error);
    if (!error.empty()) return error;
    if (path == dir || is_private(*volume)) continue;  // /dev/shm, a hostPath where it is
    std::error_code ec;
    const fs::path link(path);
    if (fs::is_symlink(link, ec)) {
      if (fs::read_symlink(link, ec) == fs::path(dir)) continue;
      std::string why = "fake: mountPath " + path + " is already a link to ";
      why += fs::read_symlink(link, ec).string() + ", not to volume \"" + name;
      why += "\" (pods of the fake share this machine's filesystem)";
      return why;
    }
    if (fs::exists(link, ec)) {
      std::string why = "fake: mountPath " + path;
      why += " exists on this machine; the fake mounts a volume by making it a link";
      return why;
    }
    fs::create_directories(link.parent_path(), ec);
    fs::create_directory_symlink(dir, link, ec);
    if (ec) return "fake: cannot link " + path + " to " + dir + ": " + ec.message();
  }
  return "";
}

}  // namespace

std::string claim_dir(const std::string& state_dir, const std::string& ns,
                      const std::string& claim) {
  return state_dir + "/volumes/" + ns + "/" + claim;
}

std::string mount_volumes(const json& pod, const std::string& pod_dir,
                          const std::string& state_dir) {
  for (const char* list : {"initContainers", "containers"}) {
    const json& containers = at_path(pod, {"spec", list});
    if (!containers.is_array()) continue;
    for (const json& c : containers) {
      if (std::string why = mount_container(pod, c, pod_dir, state_dir); !why.empty()) return why;
      if (std::string(list) == "containers") break;  // the first container only
    }
  }
  return "";
}

MountRewrites private_mounts(const json& pod, const json& container, const std::string& pod_dir) {
  MountRewrites out;
  if (!container.contains("volumeMounts")) return out;
  for (const json& m : container["volumeMounts"]) {
    const json* volume = volume_named(pod, string_at(m, {"name"}));
    const std::string path = string_at(m, {"mountPath"});
    if (volume == nullptr || !is_private(*volume) || path.empty()) continue;
    out.emplace_back(path, pod_dir + "/volumes/" + string_at(*volume, {"name"}));
  }
  return out;
}

std::string rewrite_private_mounts(const std::string& text, const MountRewrites& rewrites) {
  std::string out = text;
  for (const auto& [path, dir] : rewrites) {
    std::string next;
    std::size_t i = 0;
    while (i < out.size()) {
      const bool starts = out.compare(i, path.size(), path) == 0;
      const bool before_ok = i == 0 || !path_char(out[i - 1]);
      const std::size_t end = i + path.size();
      const bool after_ok =
          end >= out.size() || out[end] == '/' || !path_char(out[end]) || path.back() == '/';
      if (starts && before_ok && after_ok) {
        next += dir;
        i = end;
      } else {
        next += out[i++];
      }
    }
    out = std::move(next);
  }
  return out;
}

}  // namespace orch::fake_kube
