// Reading nccl-tests' all_reduce_perf output (scheduler/model/all_reduce_perf.h), on the
// fixtures in tests/fixtures/all_reduce_perf/ (their README says where the format comes from).
#include "scheduler/model/all_reduce_perf.h"

#include <gmock/gmock.h>

#include <fstream>
#include <sstream>

namespace orch {
namespace {

using ::testing::HasSubstr;

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(ORCH_SOURCE_DIR) + "/tests/fixtures/all_reduce_perf/" + name);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(AllReducePerf, OneLargeMessageBetweenTwoNodesGivesItsBusBandwidth) {
  auto out = parse_all_reduce_perf(fixture("two_h100_nodes.txt"));
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->rows.size(), 1u);
  const auto& r = out->rows[0];
  EXPECT_EQ(r.size_bytes, 1073741824);
  EXPECT_EQ(r.count, 268435456);
  EXPECT_EQ(r.type, "float");
  EXPECT_EQ(r.redop, "sum");
  EXPECT_DOUBLE_EQ(*r.out_time_us, 7140.2);
  EXPECT_DOUBLE_EQ(*r.out_algbw_gb_s, 150.38);
  EXPECT_DOUBLE_EQ(*r.out_busbw_gb_s, 281.96);
  EXPECT_DOUBLE_EQ(*r.in_busbw_gb_s, 282.21);
  EXPECT_EQ(r.out_wrong, 0);
  EXPECT_EQ(r.in_wrong, 0);
  EXPECT_DOUBLE_EQ(*out->avg_busbw_gb_s, 282.085);
  EXPECT_EQ(out->out_of_bounds, 0);
  EXPECT_DOUBLE_EQ(*out->busbw_gb_s(), 281.96);
  EXPECT_EQ(out->problem(), "");
}

TEST(AllReducePerf, ASweepIsJudgedByItsLargestMessageNotTheAverage) {
  auto out = parse_all_reduce_perf(fixture("sweep_one_gpu_per_node.txt"));
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->rows.size(), 5u);
  EXPECT_DOUBLE_EQ(*out->avg_busbw_gb_s, 21.6214);
  EXPECT_DOUBLE_EQ(*out->busbw_gb_s(), 46.91);
}

TEST(AllReducePerf, TheOldLayoutWithAnErrorColumnReadsByItsHeader) {
  auto out = parse_all_reduce_perf(fixture("old_format_error_column.txt"));
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->rows.size(), 1u);
  EXPECT_DOUBLE_EQ(*out->rows[0].out_time_us, 1127512);
  EXPECT_DOUBLE_EQ(*out->rows[0].out_busbw_gb_s, 1.16);
  EXPECT_DOUBLE_EQ(*out->rows[0].in_busbw_gb_s, 1.16);
  EXPECT_FALSE(out->rows[0].out_wrong);
  EXPECT_EQ(out->problem(), "");
}

TEST(AllReducePerf, WrongValuesMakeTheRunNotCount) {
  auto out = parse_all_reduce_perf(fixture("wrong_values.txt"));
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->wrong, 1024);
  EXPECT_EQ(out->out_of_bounds, 1024);
  EXPECT_EQ(out->problem(), "1024 wrong value(s) in the results");
}

TEST(AllReducePerf, AnNcclFailureIsTheReason) {
  auto out = parse_all_reduce_perf(fixture("nccl_failure.txt"));
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_TRUE(out->rows.empty());
  EXPECT_THAT(out->problem(), HasSubstr("Test NCCL failure common.cu:958 'unhandled system error"));
  EXPECT_FALSE(out->busbw_gb_s());
}

TEST(AllReducePerf, TextWithNoResultIsAnErrorQuotingItsFirstLine) {
  auto out = parse_all_reduce_perf("srun: error: Unable to create step for job 12\n");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().message,
            "all_reduce_perf printed no result row and no average bus bandwidth (its first line: "
            "srun: error: Unable to create step for job 12)");
  EXPECT_FALSE(parse_all_reduce_perf("").ok());
}

TEST(AllReducePerf, NotANumberInARowIsNoFigure) {
  auto out = parse_all_reduce_perf(
      "     1048576        262144     float     sum      -1    nan   N/A   N/A      N/A    1.0  "
      "2.0 "
      " 3.0 0\n");
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->rows.size(), 1u);
  EXPECT_FALSE(out->rows[0].out_busbw_gb_s);
  EXPECT_FALSE(out->rows[0].out_wrong);
  EXPECT_DOUBLE_EQ(*out->busbw_gb_s(), 3.0);
}

}  // namespace
}  // namespace orch
