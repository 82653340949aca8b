// The layering check: every source folder's README says which of the project's folders its files
// may include, in the first sentence after "May include (checked by `make test`):", naming them
// in backticks (a folder, a single header such as `scheduler/cluster_port.h`, or `*` for
// anything); names after that sentence are prose and allow nothing. A line starting with
// "Never includes:" names headers, or folders with everything under them, that the folder's
// files may never include, whatever the first sentence allows. A file may always include its
// own folder's headers (unless a "Never includes:" line names them).
//
// This program reads those rules, reads every #include "..." of the project, and names each
// include a README does not allow or forbids, and each source folder whose README has no rule.
// Then it draws the declared graph (folder A -> folder B when A's rule allows B or a header of
// B; `*` adds nothing) and names every cycle, as A -> B -> A.
//
//   include_check ROOT DIR...   (DIR: the top folders to check, e.g. scheduler adapters web)
//
// Exit 0 when every include is allowed and the graph has no cycle, 1 otherwise, 2 on bad usage.
// The rules' syntax is read by readme_rule.h, the graph by folder_cycles.h (README.md here).
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "folder_cycles.h"
#include "readme_rule.h"

namespace fs = std::filesystem;
using layering::Rule;
using layering::Verdict;

namespace {

bool is_source(const fs::path& p) {
  return p.extension() == ".h" || p.extension() == ".cpp";
}

std::string joined(const std::set<std::string>& names, const char* none) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? none : out;
}

// The includes of one folder's sources against its rule; returns the problems printed.
int check_includes(const fs::path& root, const std::string& own, const Rule& rule,
                   const std::vector<fs::path>& sources, int& includes) {
  static const std::regex include_line(R"re(^\s*#\s*include\s+"([^"]+)")re");
  int problems = 0;
  for (const fs::path& file : sources) {
    std::ifstream in(file);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      const std::string include = m[1].str();
      const std::string first = include.substr(0, include.find('/'));
      if (include.find('/') == std::string::npos || !fs::is_directory(root / first)) {
        continue;  // not a project header (a system or library one)
      }
      ++includes;
      const Verdict verdict = layering::judge(rule, own, include);
      if (verdict == Verdict::allowed) continue;
      const std::string where = fs::relative(file, root).generic_string();
      if (verdict == Verdict::forbidden) {
        std::printf("%s:%d: includes %s, which %s forbids (never includes: %s)\n", where.c_str(), n,
                    include.c_str(), rule.readme.c_str(), joined(rule.never, "").c_str());
      } else {
        std::printf("%s:%d: includes %s, which %s does not allow (may include: %s)\n",
                    where.c_str(), n, include.c_str(), rule.readme.c_str(),
                    joined(rule.allowed, "its own folder only").c_str());
      }
      ++problems;
    }
  }
  return problems;
}

// The graph of the checked folders' rules, followed into every folder they name that has a rule.
layering::FolderGraph declared_graph(const fs::path& root, std::map<std::string, Rule> rules) {
  layering::FolderGraph graph;
  std::deque<std::string> todo;
  for (const auto& [folder, _] : rules) todo.push_back(folder);
  while (!todo.empty()) {
    const std::string folder = todo.front();
    todo.pop_front();
    if (graph.contains(folder)) continue;
    if (!rules.contains(folder)) {
      auto rule = layering::read_rule(root / folder / "README.md", root);
      if (!rule) continue;
      rules.emplace(folder, *rule);
    }
    graph[folder] = layering::edges_of(folder, rules.at(folder).allowed);
    for (const std::string& next : graph[folder]) todo.push_back(next);
  }
  return graph;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: include_check ROOT DIR...\n");
    return 2;
  }
  const fs::path root = argv[1];
  std::set<std::string> tops;
  for (int i = 2; i < argc; ++i) tops.insert(argv[i]);
  int problems = 0;
  int files = 0;
  int includes = 0;
  std::map<std::string, Rule> rules;  // by folder, relative to the root
  for (const std::string& top : tops) {
    if (!fs::is_directory(root / top)) {
      std::fprintf(stderr, "include_check: %s is not a folder of %s\n", top.c_str(), root.c_str());
      return 2;
    }
    std::vector<fs::path> folders = {root / top};
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      if (e.is_directory()) folders.push_back(e.path());
    }
    for (const fs::path& dir : folders) {
      std::vector<fs::path> sources;
      for (const auto& e : fs::directory_iterator(dir)) {
        if (e.is_regular_file() && is_source(e.path())) sources.push_back(e.path());
      }
      if (sources.empty()) continue;
      const std::string own = fs::relative(dir, root).generic_string();
      const auto rule = layering::read_rule(dir / "README.md", root);
      if (!rule) {
        std::printf("%s/: no README.md line \"%s\" saying what its files may include\n",
                    own.c_str(), layering::kRuleMarker.data());
        ++problems;
        continue;
      }
      files += static_cast<int>(sources.size());
      problems += check_includes(root, own, *rule, sources, includes);
      rules.emplace(own, *rule);
    }
  }
  const layering::FolderGraph graph = declared_graph(root, rules);
  int edges = 0;
  for (const auto& [_, to] : graph) edges += static_cast<int>(to.size());
  const auto cycles = layering::find_cycles(graph);
  for (const auto& cycle : cycles) {
    std::string path;
    for (const auto& folder : cycle) path += (path.empty() ? "" : " -> ") + folder;
    std::printf("cycle: %s (each folder's README.md allows the next)\n", path.c_str());
  }
  std::printf(
      "include_check: %d files, %d project includes, %d not allowed; %zu folders, %d declared "
      "edges, %zu cycles\n",
      files, includes, problems, graph.size(), edges, cycles.size());
  return problems == 0 && cycles.empty() ? 0 : 1;
}
