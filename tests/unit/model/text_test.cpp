// The shared text helpers (scheduler/common/text.h).
#include <gtest/gtest.h>

#include <cstdlib>

#include "scheduler/common/text.h"

namespace orch {
namespace {

TEST(Text, JoinPutsTheSeparatorBetweenItemsOnly) {
  EXPECT_EQ(join({}), "");
  EXPECT_EQ(join({"a"}), "a");
  EXPECT_EQ(join({"a", "b", "c"}), "a, b, c");
  EXPECT_EQ(join({"n1", "n2"}, ","), "n1,n2");
  EXPECT_EQ(join({"x", "", "y"}, "; "), "x; ; y");
}

TEST(Text, FirstLineDropsTheRestTrailingBlanksAndCutsLongLines) {
  EXPECT_EQ(first_line("sbatch: error: no partition\r\nmore"), "sbatch: error: no partition");
  EXPECT_EQ(first_line("one  \t"), "one");
  EXPECT_EQ(first_line(""), "");
  EXPECT_EQ(first_line(std::string(400, 'x')), std::string(300, 'x') + "...");
  EXPECT_EQ(first_line("abcdef", 3), "abc...");
}

TEST(Text, HomeIsExpandedOnlyAtTheStart) {
  ::setenv("HOME", "/home/train", 1);
  EXPECT_EQ(expand_home("~/.ssh/id"), "/home/train/.ssh/id");
  EXPECT_EQ(expand_home("~"), "/home/train");
  EXPECT_EQ(expand_home("/abs/~/x"), "/abs/~/x");
  EXPECT_EQ(expand_home("~other/x"), "~other/x") << "another user's home is not guessed";
  ::unsetenv("HOME");
  EXPECT_EQ(expand_home("~/x"), std::nullopt);
  EXPECT_EQ(expand_home("/x"), "/x");
  EXPECT_EQ(home_expanded("~/x"), "~/x");
}

}  // namespace
}  // namespace orch
