// Issue 41's 46,633% through the real server: a job whose model.parameters is far too large for
// what the toy trains reports an MFU above 100%. It is flagged on the job (JSON, `job show`,
// `job explain`), and `report providers` counts only the other job's MFU.
#include <gmock/gmock.h>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

using ::testing::HasSubstr;

class MfuFlagE2eTest : public E2eTest {
 protected:
  // The toy on alpha, claiming a model of `parameters`.
  std::string toy_on_alpha(const std::string& name, const std::string& parameters) const {
    return "name: " + name + "\ncommand: " + testkit::job_bin_dir() +
           "/toy_trainer --dim 32 --batch 16 --steps 30 --step-delay-ms 10"
           " --ckpt-dir \"$ORCH_CHECKPOINT_DIR\"\n"
           "resources: {nodes: 1, gpus_per_node: 2}\n"
           "model: {parameters: " +
           parameters +
           "}\n"
           "placement: {allowed: [alpha]}\n";
  }
};

TEST_F(MfuFlagE2eTest, AnMfuAboveOneHundredPercentIsFlaggedAndLeftOutOfTheProviderReport) {
  const std::int64_t fine = submit(toy_on_alpha("fine", "1024"));
  const std::int64_t wrong = submit(toy_on_alpha("wrong", "1.0e18"));
  ASSERT_GT(fine, 0);
  ASSERT_GT(wrong, 0);
  ASSERT_EQ(wait_final(fine)["state"], "succeeded") << describe_job(url_, fine);
  const json j = wait_final(wrong);
  ASSERT_EQ(j["state"], "succeeded") << describe_job(url_, wrong);

  const std::string flag = j["mfu_flag"].get<std::string>();
  EXPECT_THAT(flag, HasSubstr("model size or peak FLOPs misconfigured: MFU "));
  EXPECT_THAT(flag, HasSubstr("is above 100% (model.parameters 1e+18"));
  EXPECT_TRUE(j["mfu"].is_null()) << j.dump();
  EXPECT_EQ(attempts(wrong).at(0)["mfu_flag"], flag);
  const json good = attempts(fine).at(0);
  ASSERT_TRUE(good["mfu"].is_number()) << good.dump();
  EXPECT_EQ(good["mfu_flag"], "");

  const json report = get_json(url_, "/api/v1/reports/providers");
  json alpha;
  for (const auto& c : report["cards"]) {
    if (c["name"] == "alpha") alpha = c;
  }
  ASSERT_TRUE(alpha.is_object()) << report.dump();
  ASSERT_TRUE(alpha["median_mfu"].is_number()) << alpha.dump();
  EXPECT_NEAR(alpha["median_mfu"].get<double>(), good["mfu"].get<double>(), 1e-9);

  ProcessResult shown = cli({"job", "show", std::to_string(wrong)});
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_THAT(shown.output, HasSubstr("MFU flag         " + flag));
  ProcessResult explained = cli({"job", "explain", std::to_string(wrong)});
  ASSERT_EQ(explained.exit_code, 0) << explained.output;
  EXPECT_THAT(explained.output, HasSubstr("MFU not counted"));
}

}  // namespace
}  // namespace orch::e2e
