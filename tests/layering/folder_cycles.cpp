#include "folder_cycles.h"

#include <algorithm>
#include <filesystem>

namespace layering {
namespace {

bool names_a_file(const std::string& name) {
  return std::filesystem::path(name).has_extension();
}

enum class Mark { unseen, on_path, done };

struct Walk {
  const FolderGraph& graph;
  std::map<std::string, Mark> marks;
  std::vector<std::string> path;
  std::vector<std::vector<std::string>> cycles;

  void visit(const std::string& folder) {
    marks[folder] = Mark::on_path;
    path.push_back(folder);
    if (const auto it = graph.find(folder); it != graph.end()) {
      for (const std::string& next : it->second) {
        if (marks[next] == Mark::on_path) {
          std::vector<std::string> cycle(std::find(path.begin(), path.end(), next), path.end());
          cycle.push_back(next);
          cycles.push_back(std::move(cycle));
        } else if (marks[next] == Mark::unseen) {
          visit(next);
        }
      }
    }
    path.pop_back();
    marks[folder] = Mark::done;
  }
};

}  // namespace

std::set<std::string> edges_of(const std::string& folder, const std::set<std::string>& allowed) {
  std::set<std::string> to;
  for (std::string name : allowed) {
    if (name == "*") continue;
    while (name.ends_with('/')) name.pop_back();
    if (names_a_file(name)) name = std::filesystem::path(name).parent_path().generic_string();
    if (!name.empty() && name != folder) to.insert(name);
  }
  return to;
}

std::vector<std::vector<std::string>> find_cycles(const FolderGraph& graph) {
  Walk walk{graph, {}, {}, {}};
  for (const auto& [folder, _] : graph) {
    if (walk.marks[folder] == Mark::unseen) walk.visit(folder);
  }
  return walk.cycles;
}

}  // namespace layering
