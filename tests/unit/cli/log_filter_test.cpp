// What `orchestrate job logs` prints of a gang's tagged log (issue 41, item 5): protocol lines
// hidden after one tag, one rank's or one node's lines, whole lines across chunks, --raw.

#include "cli/log_filter.h"

#include <gtest/gtest.h>

namespace orch {
namespace {

const std::string kGangLog =
    "[east-n0/0] step 1\n"
    "[east-n0/0] @orchestrate {\"event\":\"progress\",\"step\":1}\n"
    "[east-n0/1] rank one says hi\n"
    "[east-n1/2] @orchestrate {\"event\":\"checkpoint\",\"step\":1,\"path\":\"/c\"}\n"
    "[east-n1/3] [x/1] @orchestrate the job's own bracket, not a tag\n"
    "plain line\n";

std::string filtered(LogFilterOptions options, const std::string& log) {
  LogFilter f(std::move(options));
  return f.feed(log) + f.finish();
}

TEST(LogFilter, HidesProtocolLinesAfterOneTagByDefault) {
  EXPECT_EQ(filtered({}, kGangLog),
            "[east-n0/0] step 1\n"
            "[east-n0/1] rank one says hi\n"
            "[east-n1/3] [x/1] @orchestrate the job's own bracket, not a tag\n"
            "plain line\n");
  // A single task's log is untagged: its protocol lines are hidden all the same.
  EXPECT_EQ(filtered({}, "a\n@orchestrate {\"event\":\"progress\",\"step\":2}\nb\n"), "a\nb\n");
}

TEST(LogFilter, KeepsOneRanksOrOneNodesLines) {
  LogFilterOptions rank;
  rank.rank = 1;
  EXPECT_EQ(filtered(rank, kGangLog), "[east-n0/1] rank one says hi\n");
  LogFilterOptions node;
  node.node = "east-n1";
  EXPECT_EQ(filtered(node, kGangLog),
            "[east-n1/3] [x/1] @orchestrate the job's own bracket, not a tag\n");
  LogFilterOptions both;
  both.rank = 0;
  both.node = "east-n1";
  EXPECT_EQ(filtered(both, kGangLog), "");
}

TEST(LogFilter, RawIsTheLogExactlyAsStored) {
  LogFilterOptions raw;
  raw.raw = true;
  LogFilter f(raw);
  EXPECT_EQ(f.feed(kGangLog + "no newline"), kGangLog + "no newline");
  EXPECT_EQ(f.finish(), "");
}

// A line cut between two reads is judged whole: held until its newline, or until the read ends.
TEST(LogFilter, JudgesLinesWholeAcrossChunks) {
  LogFilterOptions rank;
  rank.rank = 1;
  LogFilter f(rank);
  EXPECT_EQ(f.feed("[east-n0/"), "");
  EXPECT_EQ(f.feed("1] first half"), "");
  EXPECT_EQ(f.feed(", second half\n[east-n0/0] other\n[east-n0/1] @orch"),
            "[east-n0/1] first half, second half\n");
  EXPECT_EQ(f.feed("estrate {}\n[east-n0/1] last, without newline"), "");
  EXPECT_EQ(f.finish(), "[east-n0/1] last, without newline\n");
  EXPECT_EQ(f.finish(), "");
}

TEST(LogFilter, ABadRankOrNodeOrASingleTaskIsAClearError) {
  LogFilterOptions rank;
  rank.rank = 4;
  EXPECT_EQ(check_log_filter(rank, 7, 4), "--rank 4: job 7 has 4 tasks, ranks 0 to 3");
  rank.rank = 3;
  EXPECT_EQ(check_log_filter(rank, 7, 4), "");
  EXPECT_NE(check_log_filter(rank, 7, 1).find("job 7 runs a single task"), std::string::npos);
  LogFilterOptions node;
  node.node = "a b";
  EXPECT_NE(check_log_filter(node, 7, 4).find("--node a b: not a node name"), std::string::npos);
  node.node = "east-n0";
  EXPECT_EQ(check_log_filter(node, 7, 4), "");
  EXPECT_EQ(check_log_filter({}, 7, 1), "");
}

}  // namespace
}  // namespace orch
