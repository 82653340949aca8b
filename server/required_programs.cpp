// See required_programs.h. To find what is run: grep adapters/ for argv vectors and scripts
// (rsync_command.cpp, storage_script.cpp, local_site.cpp, slurm transfers over ssh).
#include "server/required_programs.h"

#include <unistd.h>

#include <algorithm>

namespace orch {

const std::vector<RequiredProgram>& required_programs() {
  static const std::vector<RequiredProgram> list = {
      {"/bin/sh", "dash", "runs each job's command and the storage scripts", ""},
      {"rsync", "rsync", "copies checkpoints and datasets between sites", ""},
      {"sha256sum", "coreutils", "hashes checkpoint and dataset files", ""},
      {"stat", "coreutils", "tells files from directories in storage listings", ""},
      {"find", "findutils", "lists checkpoint and dataset files", ""},
      {"ssh", "openssh-client", "carries rsync to and from Slurm clusters", "slurm"},
      {"tar", "tar", "packs checkpoints copied to and from Kubernetes clusters", "kubernetes"},
  };
  return list;
}

namespace {

bool executable_in_path(std::string_view program, const std::string& path) {
  if (program.find('/') != std::string_view::npos) {
    return ::access(std::string(program).c_str(), X_OK) == 0;
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + std::string(program);
    if (::access(candidate.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

std::vector<RequiredProgram> missing_programs(const std::vector<ClusterSpec>& clusters,
                                              const std::string& path) {
  std::vector<RequiredProgram> missing;
  for (const RequiredProgram& p : required_programs()) {
    const bool needed = p.provider.empty() ||
                        std::any_of(clusters.begin(), clusters.end(),
                                    [&](const ClusterSpec& c) { return c.provider == p.provider; });
    if (needed && !executable_in_path(p.program, path)) missing.push_back(p);
  }
  return missing;
}

std::string missing_programs_message(const std::vector<RequiredProgram>& missing) {
  if (missing.empty()) return "";
  std::string out = "missing program" + std::string(missing.size() > 1 ? "s" : "") + ":\n";
  std::vector<std::string_view> packages;
  for (const RequiredProgram& p : missing) {
    out +=
        "  " + std::string(p.program) + " (Debian package " + std::string(p.package) +
        "): " + std::string(p.why) +
        (p.provider.empty() ? "" : " (" + std::string(p.provider) + " clusters are configured)") +
        "\n";
    if (std::find(packages.begin(), packages.end(), p.package) == packages.end()) {
      packages.push_back(p.package);
    }
  }
  out += "install with: apt-get install";
  for (std::string_view pkg : packages) out += " " + std::string(pkg);
  out += "  (or run `make deps`)\n";
  return out;
}

}  // namespace orch
