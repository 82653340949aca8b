// The task tag of a gang's log lines (scheduler/model/log_tag.h, issue 41): what the agent writes,
// and what the scheduler, the CLI and the page read back.

#include "scheduler/model/log_tag.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace orch {
namespace {

TEST(LogTag, TextNamesTheNodeAndTheRank) {
  EXPECT_EQ(log_tag_text("east-n0", 3), "[east-n0/3] ");
  EXPECT_EQ(log_tag_text("node.cluster_1", 0), "[node.cluster_1/0] ");
  // A name the tag cannot carry (a space, a slash, a bracket, empty, too long) is "?".
  for (const std::string& bad :
       std::vector<std::string>{"a b", "a/b", "a]", "", std::string(254, 'n')}) {
    EXPECT_EQ(log_tag_text(bad, 1), "[?/1] ") << bad;
  }
  EXPECT_EQ(log_tag_text("n", -4), "[n/0] ");
}

TEST(LogTag, SplitReadsBackWhatTextWrites) {
  std::string_view rest;
  const std::string line = log_tag_text("east-n1", 12) + "loss 2.5";
  auto tag = split_log_tag(line, &rest);  // views into line
  ASSERT_TRUE(tag.has_value());
  EXPECT_EQ(tag->node, "east-n1");
  EXPECT_EQ(tag->rank, 12);
  EXPECT_EQ(rest, "loss 2.5");
  tag = split_log_tag("[?/7] ", &rest);
  ASSERT_TRUE(tag.has_value());
  EXPECT_EQ(tag->node, "?");
  EXPECT_EQ(rest, "");
}

// A line that does not start with a well-formed tag is its own text: the job's "[rank3]:"
// (torchrun), a bracket without a rank, a rank that is not a number, no space after "]".
TEST(LogTag, OnlyAWellFormedTagAtTheStartIsOne) {
  for (const std::string& line : std::vector<std::string>{
           "[rank3]: File \"x.py\"", "[INFO] starting", "[n0/x] a", "[n0/] a", "[/1] a", "[n0/1]a",
           " [n0/1] a", "[n 0/1] a", "[n0/1234567890] a", "plain"}) {
    std::string_view rest;
    EXPECT_FALSE(split_log_tag(line, &rest).has_value()) << line;
    EXPECT_EQ(rest, line);
    EXPECT_EQ(strip_log_tag(line), line);
  }
  // One tag only: a job's own "[x/1] " after the agent's stays.
  EXPECT_EQ(strip_log_tag("[n0/0] [x/1] text"), "[x/1] text");
}

}  // namespace
}  // namespace orch
