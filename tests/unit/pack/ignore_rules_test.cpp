// The .gitignore subset a workdir is packed with (cli/ignore_rules.h), pattern by pattern.
#include <gtest/gtest.h>

#include "cli/ignore_rules.h"

namespace orch {
namespace {

bool ignored(const std::string& file, const std::string& path, bool is_dir = false) {
  IgnoreRules rules;
  rules.add_file("", file);
  return rules.ignored(path, is_dir);
}

TEST(IgnoreRules, ANameMatchesAtAnyDepth) {
  EXPECT_TRUE(ignored("*.pyc\n", "a.pyc"));
  EXPECT_TRUE(ignored("*.pyc\n", "pkg/sub/a.pyc"));
  EXPECT_FALSE(ignored("*.pyc\n", "a.py"));
  EXPECT_TRUE(ignored("__pycache__\n", "pkg/__pycache__", true));
  EXPECT_TRUE(ignored("data?.bin\n", "x/data1.bin"));
  EXPECT_FALSE(ignored("data?.bin\n", "x/data10.bin"));
  EXPECT_TRUE(ignored("run[0-9]\n", "run7"));
  EXPECT_FALSE(ignored("run[!0-9]\n", "run7"));
}

TEST(IgnoreRules, BlankLinesAndCommentsAreSkipped) {
  EXPECT_FALSE(ignored("\n# a.txt\n   \n", "a.txt"));
  EXPECT_TRUE(ignored("\\#notes\n", "#notes"));
  EXPECT_TRUE(ignored("a.txt   \n", "a.txt"));
  EXPECT_TRUE(ignored("a.txt\r\n", "a.txt"));
}

TEST(IgnoreRules, NegationReincludesWhatAnEarlierPatternLeftOut) {
  EXPECT_FALSE(ignored("*.log\n!keep.log\n", "keep.log"));
  EXPECT_TRUE(ignored("*.log\n!keep.log\n", "other.log"));
  EXPECT_TRUE(ignored("!keep.log\n*.log\n", "keep.log"));  // the last match decides
  EXPECT_TRUE(ignored("\\!bang\n", "!bang"));
}

TEST(IgnoreRules, ATrailingSlashMatchesDirectoriesOnly) {
  EXPECT_TRUE(ignored("build/\n", "build", true));
  EXPECT_FALSE(ignored("build/\n", "build", false));
  EXPECT_TRUE(ignored("build/\n", "src/build", true));
}

TEST(IgnoreRules, ASlashAnchorsToTheFilesDirectory) {
  EXPECT_TRUE(ignored("/data\n", "data", true));
  EXPECT_FALSE(ignored("/data\n", "pkg/data", true));
  EXPECT_TRUE(ignored("pkg/*.bin\n", "pkg/a.bin"));
  EXPECT_FALSE(ignored("pkg/*.bin\n", "pkg/sub/a.bin"));
  EXPECT_FALSE(ignored("pkg/*.bin\n", "other/pkg/a.bin"));
}

TEST(IgnoreRules, DoubleStarsMatchAnyDirectories) {
  EXPECT_TRUE(ignored("**/logs\n", "logs", true));
  EXPECT_TRUE(ignored("**/logs\n", "a/b/logs", true));
  EXPECT_TRUE(ignored("a/**/b\n", "a/b"));
  EXPECT_TRUE(ignored("a/**/b\n", "a/x/y/b"));
  EXPECT_FALSE(ignored("a/**/b\n", "c/a/x/b"));
  EXPECT_TRUE(ignored("out/**\n", "out/x/y.txt"));
}

TEST(IgnoreRules, ADeeperFilesPatternsApplyBelowItsDirectoryOnly) {
  IgnoreRules rules;
  rules.add_file("", "*.bin\n");
  rules.add_file("pkg", "!weights.bin\n/local.txt\n");
  EXPECT_FALSE(rules.ignored("pkg/weights.bin", false));
  EXPECT_TRUE(rules.ignored("weights.bin", false));
  EXPECT_TRUE(rules.ignored("pkg/local.txt", false));
  EXPECT_FALSE(rules.ignored("local.txt", false));
  EXPECT_FALSE(rules.ignored("pkg/sub/local.txt", false));
}

}  // namespace
}  // namespace orch
