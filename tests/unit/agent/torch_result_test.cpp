// The torch probe's result line read back by hand (agents/torch_result.h), and the
// `torch-probe` check over it.

#include "agents/torch_result.h"

#include <gmock/gmock.h>

namespace orch::agent {
namespace {

using ::testing::HasSubstr;

constexpr const char* kCudaLine =
    R"({"version":"2.3.0","device":"cuda","dtype":"bfloat16","world":2,)"
    R"("gpus":[{"tflops":712.5,"n":8192,"hbm_gb_s":2950.1,"index":0,"name":"NVIDIA H100 80GB HBM3"},)"
    R"({"tflops":698,"n":8192,"hbm_gb_s":2941,"index":1,"name":"NVIDIA H100 80GB HBM3"}],)"
    R"("allreduce_busbw_gb_s":410.2,"allreduce_bytes":268435456,"seconds":12.3})";

TorchReading parsed(const std::string& out) {
  std::string why;
  std::optional<TorchReading> r = parse_torch_output(out, &why);
  EXPECT_TRUE(r.has_value()) << why;
  return r ? *r : TorchReading{};
}

std::string refused(const std::string& out) {
  std::string why;
  EXPECT_FALSE(parse_torch_output(out, &why).has_value()) << out;
  return why;
}

TEST(TorchResultTest, ACudaLineGivesEveryGpusFigures) {
  TorchReading r = parsed(kCudaLine);
  EXPECT_EQ(r.device, "cuda");
  EXPECT_EQ(r.dtype, "bfloat16");
  EXPECT_EQ(r.version, "2.3.0");
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.gpus[1].index, 1);
  EXPECT_EQ(r.gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(*r.gpus[0].tflops, 712.5);
  EXPECT_DOUBLE_EQ(*r.gpus[1].hbm_gb_s, 2941);
  EXPECT_EQ(*r.gpus[0].n, 8192);
  EXPECT_DOUBLE_EQ(*r.allreduce_busbw_gb_s, 410.2);
  EXPECT_EQ(*r.allreduce_bytes, 268435456);
  EXPECT_EQ(*r.world, 2);
  EXPECT_TRUE(r.error.empty());
}

TEST(TorchResultTest, TheLastObjectLineCountsAfterWarnings) {
  TorchReading r = parsed(std::string("UserWarning: something\n{\"device\":\"cpu\"}\n  ") +
                          kCudaLine + "\r\n\n");
  EXPECT_EQ(r.device, "cuda");
}

TEST(TorchResultTest, AnErrorLineIsAReadingWithItsError) {
  TorchReading r = parsed(
      R"({"error":"cannot import torch with /usr/bin/python3 (python 3.11.2): No module named 'torch'","seconds":0.0})");
  EXPECT_THAT(r.error, HasSubstr("cannot import torch"));
  Check c = torch_check(r);
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.detail, HasSubstr("No module named 'torch'"));
}

TEST(TorchResultTest, MalformedLinesAreRefusedWithTheReason) {
  EXPECT_THAT(refused(""), HasSubstr("no result line"));
  EXPECT_THAT(refused("Traceback (most recent call last):\n  boom\n"), HasSubstr("no result line"));
  EXPECT_THAT(refused("{\"device\":\"cuda\""), HasSubstr("not JSON"));
  EXPECT_THAT(refused("{\"device\":3}"), HasSubstr("\"device\" must be a string"));
  EXPECT_THAT(refused("{\"device\":\"tpu\"}"), HasSubstr("unknown device \"tpu\""));
  EXPECT_THAT(refused("{\"dtype\":\"float32\"}"), HasSubstr("names no device"));
  EXPECT_THAT(refused(R"({"device":"cuda","gpus":{}})"), HasSubstr("\"gpus\" must be an array"));
  EXPECT_THAT(refused(R"({"device":"cuda","gpus":[{"tflops":1}]})"),
              HasSubstr("missing \"gpus[0].index\""));
  EXPECT_THAT(refused(R"({"device":"cuda","gpus":[{"index":-1}]})"),
              HasSubstr("\"gpus[0].index\" must be a whole number"));
  EXPECT_THAT(refused(R"({"device":"cuda","gpus":[{"index":0,"tflops":"fast"}]})"),
              HasSubstr("\"gpus[0].tflops\" must be a number"));
  EXPECT_THAT(refused(R"({"device":"cuda","world":2.5})"), HasSubstr("\"world\" must be a whole"));
}

TEST(TorchResultTest, NullsAreUnknownValues) {
  TorchReading r = parsed(R"({"device":"cuda","gpus":[{"index":0,"tflops":null}],"world":null})");
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_FALSE(r.gpus[0].tflops.has_value());
  EXPECT_FALSE(r.world.has_value());
}

TEST(TorchResultTest, TheCheckPassesWithEveryFigureAndNamesThem) {
  Check c = torch_check(parsed(kCudaLine));
  EXPECT_EQ(c.name, "torch-probe");
  EXPECT_TRUE(c.ok) << c.detail;
  EXPECT_EQ(c.detail,
            "cuda bfloat16, 2 GPUs: GEMM 698-712 TFLOPS, copy 2941-2950 GB/s, all-reduce busbw "
            "410 GB/s over 2 (torch 2.3.0, 12.3 s)");
}

TEST(TorchResultTest, TheCheckFailsWhenAGpuOrTheAllReduceIsMissing) {
  Check no_gemm = torch_check(parsed(R"({"device":"cuda","world":1,"gpus":[{"index":0}]})"));
  EXPECT_FALSE(no_gemm.ok);
  EXPECT_THAT(no_gemm.detail, HasSubstr("incomplete: gpu 0 GEMM"));
  Check no_allreduce =
      torch_check(parsed(R"({"device":"cpu","world":2,"gpus":[{"index":0,"tflops":0.05}]})"));
  EXPECT_FALSE(no_allreduce.ok);
  EXPECT_THAT(no_allreduce.detail, HasSubstr("no all-reduce"));
  Check nothing = torch_check(parsed(R"({"device":"cpu"})"));
  EXPECT_FALSE(nothing.ok);
  EXPECT_THAT(nothing.detail, HasSubstr("no device measured"));
}

TEST(TorchResultTest, TheScriptsOwnErrorFailsTheCheckAndKeepsWhatWasMeasured) {
  Check c = torch_check(
      parsed(R"({"device":"cpu","dtype":"float32","world":2,"gpus":[{"index":0,"tflops":0.05}],)"
             R"("error":"all-reduce did not finish within the time budget"})"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.detail,
            "all-reduce did not finish within the time budget (measured: cpu float32, CPU: GEMM "
            "0.05 TFLOPS)");
}

TEST(TorchResultTest, TheComputeFigureIsTheMedianGpuOnCudaOnly) {
  EXPECT_DOUBLE_EQ(*torch_median_gpu_tflops(parsed(kCudaLine)), (712.5 + 698) / 2);
  TorchReading three = parsed(
      R"({"device":"cuda","gpus":[{"index":0,"tflops":700},{"index":1,"tflops":385},{"index":2,"tflops":710}]})");
  EXPECT_DOUBLE_EQ(*torch_median_gpu_tflops(three), 700);
  EXPECT_FALSE(
      torch_median_gpu_tflops(parsed(R"({"device":"cpu","gpus":[{"index":0,"tflops":0.05}]})")));
}

}  // namespace
}  // namespace orch::agent
