// dcgmi diag -j parsing and the dcgm check, on report shapes in tests/fixtures/dcgm/ and on the
// lab's stand-in (tests/lab/gpu/dcgmi).

#include "agents/dcgm_diag.h"

#include <gmock/gmock.h>

#include "agents/mini_json.h"
#include "tests/unit/agent/agent_test_util.h"

namespace orch::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string dcgm_fixture(const std::string& name) {
  return orch::testing::slurp(std::string(ORCH_SOURCE_DIR) + "/tests/fixtures/dcgm/" + name);
}

TEST(DcgmDiag, AsksForTheJsonReportAtTheLevel) {
  EXPECT_THAT(dcgmi_diag_arguments(3), ElementsAre("diag", "-r", "3", "-j"));
}

TEST(DcgmDiag, ReadsDcgm3PerGpuResultsWarningsInfoAndSkipsTheBanner) {
  DcgmDiag d = parse_dcgm_diag_json(dcgm_fixture("dcgm3_pcie_fail.txt"));
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.version, "3.3.5");
  ASSERT_EQ(d.tests.size(), 5u);  // the null result of a GPU not in the run is no result
  EXPECT_EQ(d.tests[0].name, "Denylist");
  EXPECT_FALSE(d.tests[0].gpu);  // "0,1": the whole node
  EXPECT_EQ(d.tests[0].result, "pass");
  EXPECT_EQ(d.tests[1].result, "warn");
  EXPECT_EQ(d.tests[1].info, "Persistence mode for GPU 0 is disabled.");
  const DcgmTestResult& pcie = d.tests[3];
  EXPECT_EQ(pcie.name, "PCIe");
  EXPECT_EQ(pcie.gpu, 1);
  EXPECT_EQ(pcie.result, "fail");
  EXPECT_THAT(pcie.info, HasSubstr("did not exceed minimum required bandwidth of 12.00"));
  EXPECT_THAT(pcie.info, HasSubstr("; GPU 1: Host to device bandwidth 8.05 GB/s"));
  EXPECT_EQ(d.tests[4].result, "skip");

  Check c = dcgm_check(d, 2);
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.detail, HasSubstr("dcgm diag -r 2: PCIe failed on GPU 1: GPU 1: Bandwidth"));
}

TEST(DcgmDiag, ReadsTheDcgm4ReportOfAGb10) {
  DcgmDiag d = parse_dcgm_diag_json(dcgm_fixture("dcgm4_gb10_software_fail.json"));
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.version, "4.2.3");
  ASSERT_EQ(d.tests.size(), 1u);
  EXPECT_EQ(d.tests[0].name, "software");
  EXPECT_EQ(d.tests[0].gpu, 0);
  EXPECT_EQ(d.tests[0].result, "fail");
  EXPECT_THAT(d.tests[0].info, HasSubstr("Persistence mode for GPU 0 is disabled"));
  EXPECT_FALSE(dcgm_check(d, 1).ok);
}

TEST(DcgmDiag, AllPassingIsAPassThatCountsTheResults) {
  DcgmDiag d = parse_dcgm_diag_json(
      R"({"DCGM GPU Diagnostic":{"test_categories":[{"category":"Integration","tests":[)"
      R"({"name":"PCIe","results":[{"gpu_ids":"0","status":"Pass"},{"gpu_ids":1,"status":"PASS"}]}]}]}})");
  Check c = dcgm_check(d, 2);
  EXPECT_TRUE(c.ok) << c.detail;
  EXPECT_EQ(c.detail, "dcgm diag -r 2: 2 results passed, 0 skipped");
}

TEST(DcgmDiag, AnUnknownStatusIsNeverAPass) {
  DcgmDiag d = parse_dcgm_diag_json(
      R"({"DCGM Diagnostic":{"test_categories":[{"tests":[{"name":"memory","results":[)"
      R"({"entity_group":"GPU","entity_id":2,"status":"Inconclusive"}]}]}]}})");
  ASSERT_EQ(d.tests.size(), 1u);
  EXPECT_EQ(d.tests[0].result, "warn");
  EXPECT_EQ(d.tests[0].gpu, 2);
  EXPECT_THAT(d.tests[0].info, HasSubstr("unknown status 'Inconclusive'"));
}

TEST(DcgmDiag, NoReportFailsTheCheckWithTheReason) {
  for (const char* text : {"", "Error: unable to establish a connection", "{not json}", "[1,2]",
                           R"({"DCGM GPU Diagnostic":{"test_categories":[]}})"}) {
    DcgmDiag d = parse_dcgm_diag_json(text);
    EXPECT_TRUE(d.tests.empty()) << text;
    EXPECT_NE(d.error, "") << text;
  }
  Check c = dcgm_check(DcgmDiag{}, 2, "dcgmi failed (exit 255): Error: unable to connect");
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.detail, "dcgm diag -r 2: dcgmi failed (exit 255): Error: unable to connect");
}

TEST(DcgmDiag, TheStandInsPlantedFailureIsReadAsAFailedTestOnGpu0) {
  std::string dir = ::testing::TempDir() + "/dcgmi-stand-in";
  std::filesystem::create_directories(dir);
  for (const char* f : {"dcgmi", "faults.sh"}) {
    std::filesystem::copy_file(std::string(ORCH_SOURCE_DIR) + "/tests/lab/gpu/" + f, dir + "/" + f,
                               std::filesystem::copy_options::overwrite_existing);
  }
  std::ofstream(dir + "/faults") << "bad dcgm_fail PCIe\n";
  std::string cmd = "SLURMD_NODENAME=bad " + dir + "/dcgmi diag -r 2 -j >" + dir + "/out";
  int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 226);
  DcgmDiag d = parse_dcgm_diag_json(orch::testing::slurp(dir + "/out"));
  Check c = dcgm_check(d, 2);
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.detail,
              HasSubstr("dcgm diag -r 2: PCIe failed on GPU 0: GPU 0: Bandwidth of GPU 0"));
}

TEST(MiniJson, ReadsValuesEscapesAndRejectsDefects) {
  std::string error;
  auto v = parse_json(R"( {"a":[1,-2.5e1,true,false,null],"s":"x\"\u00e9\n"} )", &error);
  ASSERT_TRUE(v) << error;
  ASSERT_TRUE(v->get("a")->is_array());
  EXPECT_EQ(v->get("a")->items[1].number, -25);
  EXPECT_EQ(v->get("s")->string, "x\"\xc3\xa9\n");
  for (const char* bad : {"{", "{\"a\"}", "[1,]", "\"\x01\"", "01x", "{} {}", "nul"}) {
    EXPECT_FALSE(parse_json(bad, &error)) << bad;
  }
  std::string deep(100, '[');
  EXPECT_FALSE(parse_json(deep, &error));
  EXPECT_THAT(error, HasSubstr("deeper than 64"));
}

}  // namespace
}  // namespace orch::agent
