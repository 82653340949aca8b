// The layering check: every source folder's README says which of the project's folders its files
// may include, in a line that starts "May include (checked by `make test`):" and names them in
// backticks (a folder, a single header such as `scheduler/cluster_port.h`, or `*` for
// anything). A file may always include its own folder's headers. This program reads those
// lines, reads every #include "..." of the project, and names each include a README does not
// allow, and each source folder whose README has no such line.
//
//   include_check ROOT DIR...   (DIR: the top folders to check, e.g. scheduler adapters web)
//
// Exit 0 when every include is allowed, 1 otherwise, 2 on bad usage.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

constexpr const char* kMarker = "May include (checked by `make test`):";

struct Rule {
  std::set<std::string> allowed;  // folders, single headers, or "*"
  std::string readme;             // where it was read, for messages
};

// The rule of a README: the backticked names after the marker, up to the paragraph's end.
std::optional<Rule> read_rule(const fs::path& readme, const fs::path& root) {
  std::ifstream in(readme);
  std::string line;
  std::string text;
  bool in_rule = false;
  while (std::getline(in, line)) {
    if (!in_rule) {
      const auto at = line.find(kMarker);
      if (at == std::string::npos) continue;
      in_rule = true;
      text = line.substr(at + std::string(kMarker).size());
    } else {
      if (line.empty()) break;
      text += " " + line;
    }
  }
  if (!in_rule) return std::nullopt;
  Rule rule;
  rule.readme = fs::relative(readme, root).generic_string();
  static const std::regex quoted("`([^`]+)`");
  for (std::sregex_iterator it(text.begin(), text.end(), quoted), end; it != end; ++it) {
    rule.allowed.insert((*it)[1].str());
  }
  return rule;
}

bool allowed(const Rule& rule, const std::string& own_folder, const std::string& include) {
  const std::string folder = fs::path(include).parent_path().generic_string();
  if (folder == own_folder) return true;
  return rule.allowed.contains("*") || rule.allowed.contains(include) ||
         rule.allowed.contains(folder);
}

bool is_source(const fs::path& p) {
  return p.extension() == ".h" || p.extension() == ".cpp";
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
  static const std::regex include_line(R"re(^\s*#\s*include\s+"([^"]+)")re");
  int problems = 0;
  int files = 0;
  int includes = 0;
  for (const std::string& top : tops) {
    if (!fs::is_directory(root / top)) {
      std::fprintf(stderr, "include_check: %s is not a folder of %s\n", top.c_str(),
                   root.c_str());
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
      const auto rule = read_rule(dir / "README.md", root);
      if (!rule) {
        std::printf("%s/: no README.md line \"%s\" saying what its files may include\n",
                    own.c_str(), kMarker);
        ++problems;
        continue;
      }
      for (const fs::path& file : sources) {
        ++files;
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
          if (allowed(*rule, own, include)) continue;
          std::string names;
          for (const auto& a : rule->allowed) names += (names.empty() ? "" : ", ") + a;
          std::printf("%s:%d: includes %s, which %s does not allow (may include: %s)\n",
                      fs::relative(file, root).generic_string().c_str(), n, include.c_str(),
                      rule->readme.c_str(), names.empty() ? "its own folder only" : names.c_str());
          ++problems;
        }
      }
    }
  }
  std::printf("include_check: %d files, %d project includes, %d not allowed\n", files, includes,
              problems);
  return problems == 0 ? 0 : 1;
}
