// docs/security.md's table of threats names, for each finding, the tests that prove it holds.
// This holds the table to the code: each file it names exists and defines each test it names,
// and every row names one at least.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace orch {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The rows of the table under "## Threats and what holds them".
std::vector<std::string> threat_rows(const std::string& doc) {
  std::vector<std::string> rows;
  const auto start = doc.find("## Threats and what holds them");
  if (start == std::string::npos) return rows;
  std::istringstream lines(doc.substr(start));
  std::string line;
  bool header_seen = false;
  while (std::getline(lines, line)) {
    if (line.rfind("## ", 0) == 0 && !rows.empty()) break;
    if (line.rfind("| finding", 0) == 0) {
      header_seen = true;
      continue;
    }
    if (header_seen && line.rfind("| ", 0) == 0) rows.push_back(line);
  }
  return rows;
}

TEST(ThreatTable, EveryTestItNamesExistsInTheFileItNames) {
  const std::string doc = read(ORCH_SOURCE_DIR "/docs/security.md");
  const std::vector<std::string> rows = threat_rows(doc);
  ASSERT_GE(rows.size(), 15u) << "the table is gone from docs/security.md";
  const std::regex ref(R"((tests/[A-Za-z0-9_/]+\.cpp):([A-Za-z0-9_]+))");
  for (const std::string& row : rows) {
    const std::string tests = row.substr(row.rfind("| ", row.size() - 3));
    int named = 0;
    for (std::sregex_iterator it(tests.begin(), tests.end(), ref), end; it != end; ++it) {
      ++named;
      const std::string file = (*it)[1], name = (*it)[2];
      const std::string code = read(std::string(ORCH_SOURCE_DIR) + "/" + file);
      ASSERT_FALSE(code.empty()) << file << " (named by: " << row.substr(0, 80) << ")";
      EXPECT_TRUE(std::regex_search(
          code, std::regex("TEST(_F|_P)?\\(\\s*[A-Za-z0-9_]+,\\s*" + name + "\\)")))
          << file << " has no test " << name;
    }
    EXPECT_GT(named, 0) << "a row names no test: " << row.substr(0, 120);
  }
}

}  // namespace
}  // namespace orch
