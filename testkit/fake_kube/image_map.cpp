#include "testkit/fake_kube/image_map.h"

#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace orch::fake_kube {
namespace {

namespace fs = std::filesystem;

// "repo/name:tag" -> "repo/name" (a ':' after the last '/', so a registry port stays).
std::string without_tag(const std::string& image) {
  std::string name = image.substr(0, image.find('@'));
  const auto colon = name.rfind(':');
  const auto slash = name.rfind('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    name.resize(colon);
  }
  return name;
}

std::string not_found(const std::string& command) {
  return "failed to create containerd task: failed to create shim task: OCI runtime create "
         "failed: runc create failed: unable to start container process: exec: \"" +
         command + "\": stat " + command + ": no such file or directory: unknown";
}

}  // namespace

std::string mapped_path(const ImageMap& map, const std::string& image) {
  if (auto it = map.images.find(image); it != map.images.end()) return it->second;
  if (auto it = map.images.find(without_tag(image)); it != map.images.end()) return it->second;
  if (!map.agent_binary.empty() && image.find("orchestrate-agent") != std::string::npos) {
    return map.agent_binary;
  }
  return "";
}

std::string resolve_in_image(const std::string& mapped, std::vector<std::string>& argv) {
  std::error_code ec;
  if (fs::is_directory(mapped, ec)) {
    if (argv.empty()) return "the fake knows no ENTRYPOINT of a directory image: give a command";
    if (argv[0].empty() || argv[0][0] != '/') return "";  // looked up in PATH as before
    const std::string inside = mapped + argv[0];
    if (!fs::exists(inside, ec)) return not_found(argv[0]);
    argv[0] = inside;
    return "";
  }
  const std::string program = fs::path(mapped).filename().string();
  if (argv.empty()) {
    argv.push_back(mapped);
    return "";
  }
  if (fs::path(argv[0]).filename().string() != program) return not_found(argv[0]);
  argv[0] = mapped;
  return "";
}

void add_image_mapping(ImageMap& map, const std::string& flag) {
  const auto eq = flag.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size()) {
    throw std::runtime_error("--image-map wants IMAGE=PATH, got '" + flag + "'");
  }
  map.images[flag.substr(0, eq)] = flag.substr(eq + 1);
}

}  // namespace orch::fake_kube
