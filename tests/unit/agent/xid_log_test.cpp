// Xid lines in kernel logs: finding them in every source format, their codes, the check.

#include "agents/xid_log.h"

#include <gmock/gmock.h>

#include "tests/unit/agent/agent_test_util.h"

namespace orch::agent {
namespace {

using orch::testing::fixture;
using orch::testing::kFixtures;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(XidLog, ReadsTheCodeInEveryForm) {
  EXPECT_EQ(xid_code("NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus"), 79);
  EXPECT_EQ(xid_code("kernel: NVRM: Xid (PCI:0000:c1:00): 31, pid=12890, Ch 0000003b"), 31);
  EXPECT_EQ(xid_code("[  12.3] NVRM: Xid (0000:03:00): 13, 0001 00000000 0000a097"), 13);
  // /dev/kmsg record form.
  EXPECT_EQ(xid_code("4,1234,5678901,-;NVRM: Xid (PCI:0000:3b:00): 119, pid=1, Timeout"), 119);
  EXPECT_EQ(xid_code("NVRM: Xid 48: something"), 48);
  EXPECT_FALSE(xid_code("NVRM: GPU at PCI:0000:01:00: GPU-8a47641b").has_value());
  EXPECT_FALSE(xid_code("NVRM: Xid (PCI:0000:01:00): bogus").has_value());
  EXPECT_FALSE(xid_code("NVRM: Xid (PCI:0000:01:00").has_value());
}

TEST(XidLog, FatalListIsSortedAndMatchesTheDocumentation) {
  const auto& codes = fatal_xid_codes();
  EXPECT_TRUE(std::is_sorted(codes.begin(), codes.end()));
  EXPECT_THAT(
      codes, ElementsAre(13, 31, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 119, 120,
                         140));
  EXPECT_TRUE(is_fatal_xid(79));
  EXPECT_FALSE(is_fatal_xid(32));
  EXPECT_FALSE(is_fatal_xid(154));
}

TEST(XidLog, FindsXidLinesAndFailsOnFatalCodes) {
  auto lines = find_xid_lines(fixture("kernel_xid.log"));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("NVRM: Xid (PCI:0000:c1:00): 31, pid=12890", 0), 0u);
  EXPECT_EQ(lines[3], "NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus");
  Check c = xid_check(lines);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.name, "xid");
  EXPECT_EQ(c.detail, "Xid 13, 31, 79 in the kernel log (also 32)");
}

TEST(XidLog, BenignXidIsListedButPasses) {
  auto lines = find_xid_lines(fixture("kernel_benign_xid.log"));
  ASSERT_EQ(lines.size(), 1u);
  Check c = xid_check(lines);
  EXPECT_TRUE(c.ok);
  EXPECT_THAT(c.detail, HasSubstr("only Xid 32"));
  EXPECT_TRUE(xid_check({}).ok);
  EXPECT_EQ(xid_check({}).detail, "no Xid in the kernel log");
}

TEST(XidLog, KeepsOnlyTheLastLinesAndCutsLongOnes) {
  std::string log;
  for (int i = 0; i < 150; ++i) {
    log += "NVRM: Xid (PCI:0000:01:00): 13, n=" + std::to_string(i) + "\n";
  }
  log += "NVRM: Xid (PCI:0000:01:00): 31, " + std::string(2000, 'x') + "\n";
  auto lines = find_xid_lines(log, 100);
  ASSERT_EQ(lines.size(), 100u);
  EXPECT_THAT(lines[0], HasSubstr("n=51"));
  EXPECT_EQ(lines.back().size(), 512u);
}

TEST(XidLog, ReadsAFileAndReportsAMissingOne) {
  std::string error;
  auto text = read_kernel_log(std::string(kFixtures) + "/kernel_xid.log", &error);
  ASSERT_TRUE(text.has_value()) << error;
  EXPECT_THAT(*text, HasSubstr("fallen off the bus"));
  auto missing = read_kernel_log("/nonexistent/kern.log", &error);
  EXPECT_FALSE(missing.has_value());
  EXPECT_THAT(error, HasSubstr("/nonexistent/kern.log"));
}

TEST(XidLog, DevKmsgIsReadWithoutBlockingOrSkipped) {
  // Whether /dev/kmsg is readable depends on the machine (containers, dmesg_restrict); either
  // way the call must return promptly.
  std::string error;
  auto text = read_kernel_log("", &error);
  if (!text) {
    EXPECT_THAT(error, HasSubstr("/dev/kmsg"));
  }
}

}  // namespace
}  // namespace orch::agent
