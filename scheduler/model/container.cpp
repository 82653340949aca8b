#include "scheduler/model/container.h"

#include <algorithm>

namespace orch {
namespace {

constexpr std::size_t kMaxImageBytes = 512;
constexpr std::size_t kMaxPathBytes = 1024;

bool image_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("._-/:@#+").find(c) != std::string_view::npos;
}

// Path characters every runtime takes as they are: no `,` or `:` (pyxis and apptainer split
// their mount lists on them), no space, quote or shell character.
bool path_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("._-/+@").find(c) != std::string_view::npos;
}

std::string join(const std::vector<std::string>& words, char sep) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : std::string(1, sep)) + w;
  return out;
}

std::vector<std::string> mount_list(const ContainerSpec& c, const std::vector<std::string>& bind) {
  std::vector<std::string> out;
  for (const auto& dir : bind) {
    if (!dir.empty()) out.push_back(dir + ":" + dir);
  }
  for (const auto& m : c.mounts) out.push_back(mount_text(m));
  return out;
}

}  // namespace

std::string_view runtime_name(ContainerRuntime r) {
  switch (r) {
    case ContainerRuntime::pyxis:
      return "pyxis";
    case ContainerRuntime::apptainer:
      return "apptainer";
    case ContainerRuntime::pod:
      return "pod";
    case ContainerRuntime::none:
      break;
  }
  return "none";
}

std::optional<ContainerRuntime> runtime_from_name(std::string_view name) {
  for (auto r : {ContainerRuntime::none, ContainerRuntime::pyxis, ContainerRuntime::apptainer,
                 ContainerRuntime::pod}) {
    if (runtime_name(r) == name) return r;
  }
  return std::nullopt;
}

std::optional<std::string> image_error(std::string_view value) {
  if (value.empty()) return "is empty";
  if (value.size() > kMaxImageBytes) {
    return "is " + std::to_string(value.size()) + " bytes long (at most " +
           std::to_string(kMaxImageBytes) + ")";
  }
  if (value.front() == '-') return "starts with '-' (it would be read as an option)";
  if (!std::all_of(value.begin(), value.end(), image_char)) {
    return "holds a character other than letters, digits and . _ - / : @ # +";
  }
  return std::nullopt;
}

std::optional<std::string> container_path_error(std::string_view value) {
  if (value.empty() || value.front() != '/') return "is not an absolute path";
  if (value.size() > kMaxPathBytes) return "is longer than " + std::to_string(kMaxPathBytes);
  if (!std::all_of(value.begin(), value.end(), path_char)) {
    return "holds a character other than letters, digits and . _ - / + @ (no ',' ':' or space)";
  }
  for (std::size_t at = 0; at != std::string_view::npos;) {
    const std::size_t next = value.find('/', at + 1);
    const std::string_view part = value.substr(
        at + 1, next == std::string_view::npos ? std::string_view::npos : next - at - 1);
    if (part == "..") return "has a '..' component";
    at = next;
  }
  return std::nullopt;
}

std::optional<std::string> env_name_error(std::string_view value) {
  if (value.empty()) return "is empty";
  const bool ok_first = (value[0] >= 'A' && value[0] <= 'Z') ||
                        (value[0] >= 'a' && value[0] <= 'z') || value[0] == '_';
  const bool ok_rest = std::all_of(value.begin(), value.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!ok_first || !ok_rest)
    return "is not a variable name (letters, digits, _; not a digit first)";
  return std::nullopt;
}

std::optional<ContainerMount> parse_mount(std::string_view text, std::string& why) {
  ContainerMount m;
  const std::size_t first = text.find(':');
  if (first == std::string_view::npos) {
    why = "is not SRC:DST[:ro]";
    return std::nullopt;
  }
  const std::size_t second = text.find(':', first + 1);
  m.source = std::string(text.substr(0, first));
  m.target = std::string(text.substr(
      first + 1, second == std::string_view::npos ? std::string_view::npos : second - first - 1));
  if (second != std::string_view::npos) {
    const std::string_view flag = text.substr(second + 1);
    if (flag != "ro" && flag != "rw") {
      why = "ends in '" + std::string(flag) + "'; the only flags are ro and rw";
      return std::nullopt;
    }
    m.read_only = flag == "ro";
  }
  if (auto bad = container_path_error(m.source)) {
    why = "its source " + *bad;
    return std::nullopt;
  }
  if (auto bad = container_path_error(m.target)) {
    why = "its target " + *bad;
    return std::nullopt;
  }
  return m;
}

std::string mount_text(const ContainerMount& m) {
  return m.source + ":" + m.target + (m.read_only ? ":ro" : "");
}

std::vector<std::string> bind_dirs(const std::vector<std::string>& dirs) {
  auto inside = [](const std::string& dir, const std::string& other) {
    return dir.size() > other.size() && dir.rfind(other + "/", 0) == 0;
  };
  std::vector<std::string> out;
  for (const auto& dir : dirs) {
    bool covered = dir.empty();
    for (const auto& o : dirs) covered = covered || (!o.empty() && inside(dir, o));
    for (const auto& d : out) covered = covered || d == dir;
    if (!covered) out.push_back(dir);
  }
  return out;
}

std::vector<std::string> pyxis_options(const ContainerSpec& c, const std::vector<std::string>& bind,
                                       const std::string& default_workdir) {
  std::vector<std::string> out = {"--container-image=" + c.image};
  if (auto mounts = mount_list(c, bind); !mounts.empty()) {
    out.push_back("--container-mounts=" + join(mounts, ','));
  }
  const std::string& wd = c.workdir.empty() ? default_workdir : c.workdir;
  if (!wd.empty()) out.push_back("--container-workdir=" + wd);
  if (!c.env.empty()) out.push_back("--container-env=" + join(c.env, ','));
  return out;
}

std::vector<std::string> apptainer_prefix(const ContainerSpec& c,
                                          const std::vector<std::string>& bind,
                                          const std::string& default_workdir) {
  std::vector<std::string> out = {"apptainer", "exec", "--nv"};
  if (auto mounts = mount_list(c, bind); !mounts.empty()) {
    out.insert(out.end(), {"--bind", join(mounts, ',')});
  }
  const std::string& wd = c.workdir.empty() ? default_workdir : c.workdir;
  if (!wd.empty()) out.insert(out.end(), {"--pwd", wd});
  out.push_back(c.image);
  return out;
}

}  // namespace orch
