// `job show` and `job explain` name a flagged MFU (issue 41): the job's model size or peak FLOPs
// is misconfigured, and its MFU is counted nowhere.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/job_render.h"

namespace orch {
namespace {

using nlohmann::json;

const char* kFlag =
    "model size or peak FLOPs misconfigured: MFU 46633% is above 100% (model.parameters 7.77e+10: "
    "4.66e+11 FLOP per token; peak 1 TFLOP/s per GPU x 2 GPUs on alpha)";

TEST(MfuFlagCli, JobShowPrintsTheFlagUnderTheMfu) {
  std::ostringstream out;
  render_job({{"id", 7}, {"name", "toy"}, {"mfu", nullptr}, {"mfu_flag", kFlag}},
             {{"attempts", json::array()}}, {{"events", json::array()}}, out);
  EXPECT_NE(out.str().find("  MFU              -\n  MFU flag         " + std::string(kFlag) + "\n"),
            std::string::npos)
      << out.str();
  std::ostringstream fine;
  render_job({{"id", 7}, {"name", "toy"}, {"mfu", 0.41}, {"mfu_flag", ""}},
             {{"attempts", json::array()}}, {{"events", json::array()}}, fine);
  EXPECT_EQ(fine.str().find("MFU flag"), std::string::npos) << fine.str();
}

TEST(MfuFlagCli, JobExplainSaysTheMfuIsNotCounted) {
  std::ostringstream out;
  render_explain({{"job_id", 7},
                  {"chosen", "alpha"},
                  {"clusters", json::array()},
                  {"preemption", json::array()},
                  {"mfu_flag", kFlag}},
                 out);
  EXPECT_NE(out.str().find("MFU not counted (placement, the cluster's MFU, the scorecards): " +
                           std::string(kFlag)),
            std::string::npos)
      << out.str();
}

}  // namespace
}  // namespace orch
