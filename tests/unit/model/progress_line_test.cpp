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
        BadLine{R"(@orchestrate {"event":"epoch","step":3})", "unknown event \"epoch\""}));

TEST(ProgressLine, FormatThenParseRoundTrips) {
  ProgressLine p = ProgressReport{7, 512, 0.125, 2.5};
  auto r = parse_progress_line(format_progress_line(p));
  ASSERT_TRUE(r && r->ok());
  EXPECT_EQ(std::get<ProgressReport>(r->value()).tokens, 512);
  ProgressLine c = CheckpointReport{8, "/x y/\"q\"", 0.5};
  auto rc = parse_progress_line(format_progress_line(c));
  ASSERT_TRUE(rc && rc->ok());
  EXPECT_EQ(std::get<CheckpointReport>(rc->value()).path, "/x y/\"q\"");
}

}  // namespace
}  // namespace orch
