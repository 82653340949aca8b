// The progress protocol: what parses, what is ignored, and what is reported as bad.
#include <gmock/gmock.h>

#include "scheduler/model/progress_line.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

TEST(ProgressLine, OrdinaryOutputIsNotAProtocolLine) {
  EXPECT_FALSE(parse_progress_line("epoch 1 loss 0.3").has_value());
  EXPECT_FALSE(parse_progress_line("").has_value());
  EXPECT_FALSE(parse_progress_line(" @orchestrate {}").has_value());
}

TEST(ProgressLine, ProgressWithAllFields) {
  auto r = parse_progress_line(
      R"(@orchestrate {"event":"progress","step":12,"tokens":4096,"step_time_s":0.25,"loss":1.5})");
  ASSERT_TRUE(r.has_value() && r->ok());
  const auto& p = std::get<ProgressReport>(r->value());
  EXPECT_EQ(p.step, 12);
  EXPECT_EQ(p.tokens, 4096);
  EXPECT_DOUBLE_EQ(*p.step_time_s, 0.25);
  EXPECT_DOUBLE_EQ(*p.loss, 1.5);
}

TEST(ProgressLine, CheckpointWithPathAndCarriageReturn) {
  auto r = parse_progress_line(
      "@orchestrate {\"event\":\"checkpoint\",\"step\":40,\"path\":\"/c/40\"}\r");
  ASSERT_TRUE(r.has_value() && r->ok());
  const auto& c = std::get<CheckpointReport>(r->value());
  EXPECT_EQ(c.step, 40);
  EXPECT_EQ(c.path, "/c/40");
}

TEST(ProgressLine, ACheckpointStartNamesTheStepAndThePathOfTheSaveThatBegins) {
  auto r = parse_progress_line(
      R"(@orchestrate {"event":"checkpoint_start","step":40,"path":"/c/40.pt","extra":1})");
  ASSERT_TRUE(r.has_value() && r->ok());
  const auto& s = std::get<CheckpointStartReport>(r->value());
  EXPECT_EQ(s.step, 40);
  EXPECT_EQ(s.path, "/c/40.pt");
  const std::string line = format_progress_line(ProgressLine{s});
  EXPECT_THAT(line, HasSubstr(R"("event":"checkpoint_start")"));
  auto again = parse_progress_line(line);
  ASSERT_TRUE(again.has_value() && again->ok());
  EXPECT_EQ(std::get<CheckpointStartReport>(again->value()).path, "/c/40.pt");
}

struct BadLine {
  const char* line;
  const char* message;
};

class BadProgressLine : public ::testing::TestWithParam<BadLine> {};

TEST_P(BadProgressLine, IsReportedWithTheReason) {
  auto r = parse_progress_line(GetParam().line);
  ASSERT_TRUE(r.has_value());
  ASSERT_FALSE(r->ok());
  EXPECT_THAT(r->error().message, HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadProgressLine,
    ::testing::Values(
        BadLine{"@orchestrate {nope", "not valid JSON"},
        BadLine{"@orchestrate [1,2]", "expected a JSON object"},
        BadLine{R"(@orchestrate {"step":1})", "missing \"event\""},
        BadLine{R"(@orchestrate {"event":"progress"})", "missing \"step\""},
        BadLine{R"(@orchestrate {"event":"progress","step":-1})", "\"step\" must be >= 0"},
        BadLine{R"(@orchestrate {"event":"progress","step":"3"})",
                "\"step\" must be a non-negative integer"},
        BadLine{R"(@orchestrate {"event":"progress","step":3,"step_time_s":0})",
                "\"step_time_s\" must be > 0"},
        BadLine{R"(@orchestrate {"event":"progress","step":3,"tokens":1.5})",
                "\"tokens\" must be a non-negative integer"},
        BadLine{R"(@orchestrate {"event":"checkpoint","step":3})", "non-empty string \"path\""},
        BadLine{R"(@orchestrate {"event":"checkpoint","step":3,"path":""})",
                "non-empty string \"path\""},
        BadLine{R"(@orchestrate {"event":"epoch","step":3})", "unknown event \"epoch\""},
        BadLine{R"(@orchestrate {"event":"checkpoint_start","step":3})",
                "checkpoint_start needs a non-empty string \"path\""},
        BadLine{R"(@orchestrate {"event":"checkpoint_start","path":"/c/3"})", "missing \"step\""},
        BadLine{R"(@orchestrate {"event":"checkpoint","step":3,"path":"/c/3","tier":"ram"})",
                "\"tier\" must be \"local\" or \"shared\""},
        BadLine{R"(@orchestrate {"event":"checkpoint","step":3,"path":"/c/3","tier":"local"})",
                "needs \"node\""},
        BadLine{R"(@orchestrate {"event":"checkpoint","step":3,"path":"/c/3","node":"n1"})",
                "\"node\" is for \"tier\":\"local\" only"},
        BadLine{R"(@orchestrate {"event":"checkpoint","step":3,"path":"/c/3","tier":"local",)"
                R"("node":7})",
                "\"node\" must be a non-empty string"},
        BadLine{R"(@orchestrate {"event":"progress","step":3,"ranks":{"rank":0}})",
                "\"ranks\" must be an array of objects"},
        BadLine{R"(@orchestrate {"event":"progress","step":3,"ranks":[7]})",
                "ranks[0] must be an object"},
        BadLine{R"(@orchestrate {"event":"progress","step":3,"ranks":[)"
                R"({"rank":0,"node":"a","step_time_s":1},{"node":"b","step_time_s":1}]})",
                "ranks[1].rank must be an integer >= 0"},
        BadLine{R"(@orchestrate {"event":"progress","step":3,"ranks":[)"
                R"({"rank":-1,"node":"a","step_time_s":1}]})",
                "ranks[0].rank must be an integer >= 0"},
        BadLine{R"(@orchestrate {"event":"progress","step":3,"ranks":[)"
                R"({"rank":0,"node":"","step_time_s":1}]})",
                "ranks[0].node must be a non-empty string"},
        BadLine{R"(@orchestrate {"event":"progress","step":3,"ranks":[)"
                R"({"rank":0,"node":"a","step_time_s":0}]})",
                "ranks[0].step_time_s must be a number > 0"},
        BadLine{R"(@orchestrate {"event":"progress","step":3,"ranks":[)"
                R"({"rank":0,"node":"a"}]})",
                "ranks[0].step_time_s must be a number > 0"}));

TEST(ProgressLine, ProgressWithPerRankStepTimes) {
  auto r = parse_progress_line(
      R"(@orchestrate {"event":"progress","step":5,"ranks":[)"
      R"({"rank":0,"node":"n1","step_time_s":0.2},{"rank":1,"node":"n2","step_time_s":0.31}]})");
  ASSERT_TRUE(r.has_value() && r->ok()) << r->error().message;
  const auto& p = std::get<ProgressReport>(r->value());
  ASSERT_EQ(p.ranks.size(), 2u);
  EXPECT_EQ(p.ranks[1].rank, 1);
  EXPECT_EQ(p.ranks[1].node, "n2");
  EXPECT_DOUBLE_EQ(p.ranks[1].step_time_s, 0.31);
  // Absent, null or empty: no ranks.
  for (const char* line : {R"(@orchestrate {"event":"progress","step":5})",
                           R"(@orchestrate {"event":"progress","step":5,"ranks":null})",
                           R"(@orchestrate {"event":"progress","step":5,"ranks":[]})"}) {
    auto q = parse_progress_line(line);
    ASSERT_TRUE(q && q->ok()) << line;
    EXPECT_TRUE(std::get<ProgressReport>(q->value()).ranks.empty()) << line;
  }
}

TEST(ProgressLine, FormatThenParseRoundTrips) {
  ProgressLine p = ProgressReport{7, 512, 0.125, 2.5};
  auto r = parse_progress_line(format_progress_line(p));
  ASSERT_TRUE(r && r->ok());
  EXPECT_EQ(std::get<ProgressReport>(r->value()).tokens, 512);
  // No ranks: no "ranks" key at all.
  EXPECT_EQ(format_progress_line(p).find("ranks"), std::string::npos);
  ProgressReport with_ranks{9};
  with_ranks.ranks = {{0, "n1", 0.5}, {3, "n2", 0.75}};
  auto rr = parse_progress_line(format_progress_line(with_ranks));
  ASSERT_TRUE(rr && rr->ok());
  const auto& back = std::get<ProgressReport>(rr->value()).ranks;
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].rank, 3);
  EXPECT_EQ(back[1].node, "n2");
  EXPECT_DOUBLE_EQ(back[1].step_time_s, 0.75);
  ProgressLine c = CheckpointReport{8, "/x y/\"q\"", 0.5};
  auto rc = parse_progress_line(format_progress_line(c));
  ASSERT_TRUE(rc && rc->ok());
  EXPECT_EQ(std::get<CheckpointReport>(rc->value()).path, "/x y/\"q\"");
  EXPECT_EQ(std::get<CheckpointReport>(rc->value()).tier, CheckpointTier::shared);
  EXPECT_EQ(format_progress_line(c).find("tier"), std::string::npos);
}

TEST(ProgressLine, ATieredSaveIsTwoLinesOfOneStep) {
  auto local = parse_progress_line(
      R"(@orchestrate {"event":"checkpoint","step":40,"path":"/local/job-7/step-40","tier":"local","node":"gpu-a1","save_time_s":1.5})");
  ASSERT_TRUE(local && local->ok()) << local->error().message;
  const auto& l = std::get<CheckpointReport>(local->value());
  EXPECT_EQ(l.tier, CheckpointTier::local);
  EXPECT_EQ(l.node, "gpu-a1");
  auto shared = parse_progress_line(
      R"(@orchestrate {"event":"checkpoint","step":40,"path":"/ckpt/job-7/step-40","tier":"shared"})");
  ASSERT_TRUE(shared && shared->ok());
  EXPECT_EQ(std::get<CheckpointReport>(shared->value()).tier, CheckpointTier::shared);
  auto back = parse_progress_line(format_progress_line(l));
  ASSERT_TRUE(back && back->ok());
  EXPECT_EQ(std::get<CheckpointReport>(back->value()).node, "gpu-a1");
  EXPECT_EQ(std::get<CheckpointReport>(back->value()).tier, CheckpointTier::local);
}

}  // namespace
}  // namespace orch
