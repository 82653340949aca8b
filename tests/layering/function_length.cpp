// The function-length check: every function body in the .cpp and .h files under the given
// folders, from the line of its opening brace to the line of its closing brace, against a limit
// (80 lines unless told). A declared table is exempt: a function whose first line has the
// comment line `// function-length: table` right above it. A lambda or a local class counts
// toward the function it is written in. A marker above a function within the limit, or above no
// function, is named too, so that the exemptions stay true. The parser (source_tokens.h,
// function_bodies.h) needs nothing installed.
//
//   function_length [--limit N] ROOT DIR...   (DIR: the top folders to check, e.g. scheduler)
//
// Prints `path:line: name is N lines (limit 80)` for each function over the limit. Exit 0 when
// there is none, 1 otherwise, 2 on bad usage.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "function_bodies.h"
#include "source_tokens.h"

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Tally {
  int files = 0;
  int functions = 0;
  int tables = 0;
  int problems = 0;
};

// Names each function of `file` over the limit, and each marker that exempts nothing.
void check_file(const fs::path& file, const std::string& shown, int limit, Tally& tally) {
  const std::string src = read_file(file);
  const layering::SourceTokens lexed = layering::tokenize(src);
  std::set<int> unused_markers = lexed.marker_lines;
  ++tally.files;
  for (const layering::FunctionBody& f : layering::function_bodies(lexed.tokens)) {
    ++tally.functions;
    const bool table = lexed.marker_lines.contains(f.first_line - 1);
    if (table) unused_markers.erase(f.first_line - 1);
    if (table && f.lines > limit) {
      ++tally.tables;
    } else if (table) {
      std::printf("%s:%d: %s is %d lines, within the limit %d: drop its \"%s\" line\n",
                  shown.c_str(), f.name_line, f.name.c_str(), f.lines, limit,
                  layering::kTableMarker.data());
      ++tally.problems;
    } else if (f.lines > limit) {
      std::printf("%s:%d: %s is %d lines (limit %d)\n", shown.c_str(), f.name_line, f.name.c_str(),
                  f.lines, limit);
      ++tally.problems;
    }
  }
  for (const int line : unused_markers) {
    std::printf("%s:%d: \"%s\" is not right above a function\n", shown.c_str(), line,
                layering::kTableMarker.data());
    ++tally.problems;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int limit = 80;
  int arg = 1;
  if (argc > 2 && std::string(argv[1]) == "--limit") {
    limit = std::atoi(argv[2]);
    arg = 3;
  }
  if (argc - arg < 2 || limit <= 0) {
    std::fprintf(stderr, "usage: function_length [--limit N] ROOT DIR...\n");
    return 2;
  }
  const fs::path root = argv[arg];
  std::vector<fs::path> files;
  for (int i = arg + 1; i < argc; ++i) {
    if (!fs::is_directory(root / argv[i])) {
      std::fprintf(stderr, "function_length: %s is not a folder of %s\n", argv[i], root.c_str());
      return 2;
    }
    for (const auto& e : fs::recursive_directory_iterator(root / argv[i])) {
      const auto ext = e.path().extension();
      if (e.is_regular_file() && (ext == ".cpp" || ext == ".h")) files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  Tally tally;
  for (const fs::path& file : files) {
    check_file(file, fs::relative(file, root).generic_string(), limit, tally);
  }
  std::printf("function_length: %d files, %d functions, %d declared tables, %d problems\n",
              tally.files, tally.functions, tally.tables, tally.problems);
  return tally.problems == 0 ? 0 : 1;
}
