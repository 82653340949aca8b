// expand_hostlist: the compressed host lists squeue, scontrol and sacct print.
#include <gmock/gmock.h>

#include <string>
#include <vector>

#include "adapters/slurm/slurm_parse.h"

namespace orch::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using V = std::vector<std::string>;

V expand(std::string_view list) {
  auto r = expand_hostlist(list);
  EXPECT_TRUE(r.ok()) << list << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : V{};
}

TEST(slurm_parse_hostlist, SingleNamesAndEmpty) {
  EXPECT_THAT(expand("alpha-n1"), ElementsAre("alpha-n1"));
  EXPECT_THAT(expand("login"), ElementsAre("login"));
  EXPECT_THAT(expand(""), ElementsAre());
  EXPECT_THAT(expand("  alpha-n3\n"), ElementsAre("alpha-n3"));
}

TEST(slurm_parse_hostlist, RangesAndLists) {
  EXPECT_THAT(expand("alpha-n[1-3]"), ElementsAre("alpha-n1", "alpha-n2", "alpha-n3"));
  EXPECT_THAT(expand("alpha-n[1-2,7]"), ElementsAre("alpha-n1", "alpha-n2", "alpha-n7"));
  EXPECT_THAT(
      expand("alpha-n[1-3,7],gpu[001-002],login"),
      ElementsAre("alpha-n1", "alpha-n2", "alpha-n3", "alpha-n7", "gpu001", "gpu002", "login"));
  EXPECT_THAT(expand("a[5]"), ElementsAre("a5"));
  EXPECT_THAT(expand("gpu-a-[001-002],gpu-b-017"),
              ElementsAre("gpu-a-001", "gpu-a-002", "gpu-b-017"));
}

TEST(slurm_parse_hostlist, ZeroPaddingFollowsTheLowerBound) {
  EXPECT_THAT(expand("n[8-10]"), ElementsAre("n8", "n9", "n10"));
  EXPECT_THAT(expand("n[08-10]"), ElementsAre("n08", "n09", "n10"));
  EXPECT_THAT(expand("gpu[098-101]"), ElementsAre("gpu098", "gpu099", "gpu100", "gpu101"));
  EXPECT_THAT(expand("n[0-1]"), ElementsAre("n0", "n1"));
}

TEST(slurm_parse_hostlist, SeveralBracketsGiveEveryCombinationLeftmostSlowest) {
  EXPECT_THAT(expand("n[1-2]-ib[3-4]"), ElementsAre("n1-ib3", "n1-ib4", "n2-ib3", "n2-ib4"));
  EXPECT_THAT(expand("rack[1-2]n[01,03]"),
              ElementsAre("rack1n01", "rack1n03", "rack2n01", "rack2n03"));
  EXPECT_THAT(expand("[1-2]x"), ElementsAre("1x", "2x"));
}

TEST(slurm_parse_hostlist, MalformedListsAreInvalidAndQuoteTheList) {
  for (std::string_view bad :
       {"n[1-", "n1]", "n[]", "n[a-b]", "n[3-1]", "n[1-2", "a,,b", ",a", "a,", "n[[1]]", "n[1--2]",
        "n[-1]", "a b", "n[1:3]", "n[1-2]]", "n[1,]", "tab\tname", "n[1-2-3]"}) {
    auto r = expand_hostlist(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid) << bad;
    EXPECT_THAT(r.error().message, HasSubstr("host list")) << bad;
  }
  auto r = expand_hostlist("alpha-n[3-1]");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("'alpha-n[3-1]'"));
}

TEST(slurm_parse_hostlist, RefusesListsThatExpandToTooManyNames) {
  auto r = expand_hostlist("n[1-99999999]");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("more than"));
  EXPECT_FALSE(expand_hostlist("n[1-300]x[1-300]").ok());
  EXPECT_FALSE(expand_hostlist("n[1-9999999999999999999999]").ok());  // does not fit 64 bits
  EXPECT_EQ(expand("n[1-65536]").size(), 65536u);
}

}  // namespace
}  // namespace orch::slurm
