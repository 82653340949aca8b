// What failed (issue 41, item 6): the excerpt an attempt keeps when it fails, built from the
// classifier's verdict, the exit status and the log tail; the hint for exit codes 126 and 127;
// the job's reason with the excerpt's first line.
#include "scheduler/lifecycle/error_excerpt.h"

#include <gmock/gmock.h>

#include "scheduler/common/utf8.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

ExitStatus exited_with(int code, std::string node = "") {
  ExitStatus s;
  s.exit_code = code;
  s.failed_node = std::move(node);
  return s;
}

// The excerpt as the brain builds it: the classifier's verdict over the same evidence.
std::string excerpt_of(const ExitStatus& status, std::vector<std::string> tail,
                       std::string shell = "", bool workdir = false) {
  FailureEvidence evidence{status, false, tail};
  ExcerptInput in{classify_failure(evidence), status, std::move(tail),
                  CommandPlace{std::move(shell), workdir, "", "", "local"}};
  return build_error_excerpt(in);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = text.find('\n', at);
    out.push_back(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

TEST(ErrorExcerpt, CommandNotFoundLeadsWithTheShellsWordsAndAHint) {
  const std::string text =
      excerpt_of(exited_with(127, "east-n0"),
                 {"starting at 12:00", "bash: line 1: torchrun: command not found"});
  const auto lines = lines_of(text);
  ASSERT_GE(lines.size(), 3u) << text;
  EXPECT_EQ(lines[0], "torchrun: command not found");
  EXPECT_THAT(lines[1], StartsWith("command not found on east-n0 (exit 127): it runs under bash -c "
                                   "(/bin/sh -c where there is no bash)"));
  EXPECT_THAT(lines[1], HasSubstr("the node's PATH"));
  EXPECT_EQ(lines.back(), "bash: line 1: torchrun: command not found");
}

TEST(ErrorExcerpt, DashSaysNotFoundAndTheHintNamesTheJobsShellAndWorkdir) {
  const std::string text =
      excerpt_of(exited_with(127, "east-n0"), {"sh: 1: torchrun: not found"}, "sh", true);
  const auto lines = lines_of(text);
  ASSERT_GE(lines.size(), 2u) << text;
  EXPECT_EQ(lines[0], "torchrun: not found");
  EXPECT_THAT(lines[1], HasSubstr("under /bin/sh -c in $ORCH_WORKDIR (the job's workdir)"));
}

TEST(ErrorExcerpt, Exit126SaysNotExecutable) {
  const std::string hint = command_hint(126, "alpha-n1", {"bash-login", false, "", "", "slurm"});
  EXPECT_THAT(hint, StartsWith("command found but not executable on alpha-n1 (exit 126)"));
  EXPECT_THAT(hint, HasSubstr("bash -l -c"));
  EXPECT_THAT(hint, HasSubstr("in the attempt's own work directory"));
  EXPECT_EQ(command_hint(1, "alpha-n1", {}), "");
  EXPECT_EQ(command_hint(137, "alpha-n1", {}), "");
}

TEST(ErrorExcerpt, InAContainerTheHintNamesTheImageItsDirectoryAndItsPath) {
  const std::string hint = command_hint(
      127, "gke-n3", {"", false, "nvcr.io/nvidia/pytorch:24.05", "/app", "kubernetes"});
  EXPECT_THAT(hint,
              HasSubstr("in image nvcr.io/nvidia/pytorch:24.05 in /app, with the image's PATH"));
  EXPECT_THAT(
      command_hint(127, "", {"sh", false, "", "", "kubernetes"}),
      HasSubstr("under /bin/sh -c in the image's working directory, with the image's PATH"));
}

TEST(ErrorExcerpt, APythonTracebacksLastLineLeadsAndEndsTheExcerpt) {
  const std::string text =
      excerpt_of(exited_with(1), {"step 3 loss 2.1", "Traceback (most recent call last):",
                                  "  File \"train.py\", line 9, in <module>", "    model(x)",
                                  "ValueError: shapes (3,4) and (5,6) not aligned"});
  const auto lines = lines_of(text);
  EXPECT_EQ(lines.front(), "ValueError: shapes (3,4) and (5,6) not aligned") << text;
  EXPECT_EQ(lines.back(), "ValueError: shapes (3,4) and (5,6) not aligned") << text;
  EXPECT_THAT(text, Not(HasSubstr("exit 1)"))) << "no hint for an ordinary exit code";
}

TEST(ErrorExcerpt, KeepsOnlyTheLastFewLinesAndNeverAProtocolLine) {
  std::vector<std::string> tail;
  for (int i = 0; i < 20; ++i) tail.push_back("line " + std::to_string(i));
  tail.push_back("@orchestrate {\"event\":\"progress\",\"step\":20}");
  tail.push_back("[east-n0/0] @orchestrate {\"event\":\"progress\",\"step\":21}");
  const std::string text = excerpt_of(exited_with(3), tail);
  const auto lines = lines_of(text);
  ASSERT_EQ(lines.size(), 1 + kExcerptTailLines) << text;
  EXPECT_EQ(lines[0], "exit code 3");
  EXPECT_EQ(lines[1], "line 15");
  EXPECT_EQ(lines.back(), "line 19");
  EXPECT_THAT(text, Not(HasSubstr("@orchestrate")));
}

TEST(ErrorExcerpt, AGangsExcerptIsTheFailingTasksLines) {
  ExitStatus s = exited_with(2, "west-n1");
  s.failed_rank = 3;
  const std::string text =
      excerpt_of(s, {"[west-n0/0] epoch 1", "[west-n1/3] reading shard 7", "[west-n1/2] epoch 1",
                     "[west-n1/3] OSError: shard 7 is corrupt", "[west-n0/1] epoch 1"});
  const auto lines = lines_of(text);
  ASSERT_EQ(lines.size(), 3u) << text;
  EXPECT_EQ(lines[1], "[west-n1/3] reading shard 7");
  EXPECT_EQ(lines[2], "[west-n1/3] OSError: shard 7 is corrupt");
}

TEST(ErrorExcerpt, WithoutTheFailingRankTheNodesLinesAreKept) {
  const std::string text =
      excerpt_of(exited_with(2, "west-n1"),
                 {"[west-n0/0] a", "[west-n1/2] b", "[west-n1/3] c", "[west-n0/1] d"});
  EXPECT_EQ(lines_of(text),
            (std::vector<std::string>{"exit code 2", "[west-n1/2] b", "[west-n1/3] c"}));
}

TEST(ErrorExcerpt, IsBoundedValidUtf8WithoutControlBytes) {
  std::vector<std::string> tail;
  for (int i = 0; i < 5; ++i) tail.push_back(std::string(3000, 'x') + "\xc3\xa9\x1b[31m\xff");
  const std::string text = excerpt_of(exited_with(1), tail);
  EXPECT_LE(text.size(), kMaxExcerptBytes);
  EXPECT_FALSE(first_invalid_utf8(text).has_value());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_TRUE(c == '\n' || (u >= 0x20 && u != 0x7f)) << "byte " << int(u);
  }
  // A line cut short ends on a character boundary, with "...".
  EXPECT_EQ(excerpt_line(std::string("abc\xc3\xa9") + "def", 7), "abc...");
  EXPECT_EQ(excerpt_line("  \x1b[1mbold\t  "), "?[1mbold");
}

TEST(ErrorExcerpt, OnlyFailuresKeepOne) {
  EXPECT_TRUE(is_failure_cause(ExitCause::user_error));
  EXPECT_TRUE(is_failure_cause(ExitCause::node_lost));
  EXPECT_TRUE(is_failure_cause(ExitCause::hang));
  EXPECT_FALSE(is_failure_cause(ExitCause::succeeded));
  EXPECT_FALSE(is_failure_cause(ExitCause::cancelled));
  EXPECT_FALSE(is_failure_cause(ExitCause::priority_preempted));
  EXPECT_FALSE(is_failure_cause(ExitCause::quota_reclaimed));
  EXPECT_FALSE(is_failure_cause(ExitCause::queue_timeout));
}

TEST(ReasonWithExcerpt, KeepsTheCauseAndAddsWhatFailed) {
  EXPECT_EQ(reason_with_excerpt("user_error: user restart budget spent (1 of 1)",
                                "torchrun: not found\ncommand not found on east-n0 (exit 127)"),
            "user_error: torchrun: not found; user restart budget spent (1 of 1)");
  EXPECT_EQ(reason_with_excerpt("user_error: user restart 1 of 3", ""),
            "user_error: user restart 1 of 3");
  EXPECT_EQ(reason_with_excerpt("finished", "x"), "finished");
  const std::string shortened =
      reason_with_excerpt("user_error: user restart 1 of 3", std::string(500, 'y'), 40);
  EXPECT_EQ(shortened, "user_error: " + std::string(37, 'y') + "...; user restart 1 of 3");
}

}  // namespace
}  // namespace orch
