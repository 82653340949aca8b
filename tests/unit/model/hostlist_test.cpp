// Host lists (scheduler/model/hostlist.h): the compressed lists squeue, scontrol and sacct
// print, and the store's form of an attempt's nodes.
#include <gmock/gmock.h>

#include <cstdio>
#include <string>
#include <vector>

#include "scheduler/model/hostlist.h"

namespace orch {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using V = std::vector<std::string>;

V expand(std::string_view list) {
  auto r = expand_hostlist(list);
  EXPECT_TRUE(r.ok()) << list << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : V{};
}

TEST(HostList, SingleNamesAndEmpty) {
  EXPECT_THAT(expand("alpha-n1"), ElementsAre("alpha-n1"));
  EXPECT_THAT(expand("login"), ElementsAre("login"));
  EXPECT_THAT(expand(""), ElementsAre());
  EXPECT_THAT(expand("  alpha-n3\n"), ElementsAre("alpha-n3"));
}

TEST(HostList, RangesAndLists) {
  EXPECT_THAT(expand("alpha-n[1-3]"), ElementsAre("alpha-n1", "alpha-n2", "alpha-n3"));
  EXPECT_THAT(expand("alpha-n[1-2,7]"), ElementsAre("alpha-n1", "alpha-n2", "alpha-n7"));
  EXPECT_THAT(
      expand("alpha-n[1-3,7],gpu[001-002],login"),
      ElementsAre("alpha-n1", "alpha-n2", "alpha-n3", "alpha-n7", "gpu001", "gpu002", "login"));
  EXPECT_THAT(expand("a[5]"), ElementsAre("a5"));
  EXPECT_THAT(expand("gpu-a-[001-002],gpu-b-017"),
              ElementsAre("gpu-a-001", "gpu-a-002", "gpu-b-017"));
}

TEST(HostList, ZeroPaddingFollowsTheLowerBound) {
  EXPECT_THAT(expand("n[8-10]"), ElementsAre("n8", "n9", "n10"));
  EXPECT_THAT(expand("n[08-10]"), ElementsAre("n08", "n09", "n10"));
  EXPECT_THAT(expand("gpu[098-101]"), ElementsAre("gpu098", "gpu099", "gpu100", "gpu101"));
  EXPECT_THAT(expand("n[0-1]"), ElementsAre("n0", "n1"));
}

TEST(HostList, SeveralBracketsGiveEveryCombinationLeftmostSlowest) {
  EXPECT_THAT(expand("n[1-2]-ib[3-4]"), ElementsAre("n1-ib3", "n1-ib4", "n2-ib3", "n2-ib4"));
  EXPECT_THAT(expand("rack[1-2]n[01,03]"),
              ElementsAre("rack1n01", "rack1n03", "rack2n01", "rack2n03"));
  EXPECT_THAT(expand("[1-2]x"), ElementsAre("1x", "2x"));
}

TEST(HostList, MalformedListsAreInvalidAndQuoteTheList) {
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

TEST(HostList, RefusesListsThatExpandToTooManyNames) {
  auto r = expand_hostlist("n[1-99999999]");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("more than"));
  EXPECT_FALSE(expand_hostlist("n[1-300]x[1-300]").ok());
  EXPECT_FALSE(expand_hostlist("n[1-9999999999999999999999]").ok());  // does not fit 64 bits
  EXPECT_EQ(expand("n[1-65536]").size(), 65536u);
}

// ---- compress ------------------------------------------------------------------------------

std::string compress(const V& names) {
  auto text = compress_hostlist(names);
  EXPECT_TRUE(text.has_value());
  if (!text) return "";
  EXPECT_EQ(expand(*text), names) << *text;  // always reads back as the same names
  return *text;
}

TEST(HostList, CompressesRunsOfNumberedNamesIntoBracketGroups) {
  EXPECT_EQ(compress({}), "");
  EXPECT_EQ(compress({"login"}), "login");
  EXPECT_EQ(compress({"n1"}), "n1");
  EXPECT_EQ(compress({"n1", "n2", "n3"}), "n[1-3]");
  EXPECT_EQ(compress({"alpha-0001", "alpha-0002", "alpha-0004"}), "alpha-[0001-0002,0004]");
  EXPECT_EQ(compress({"n1", "n2", "gpu001", "gpu002", "login"}), "n[1-2],gpu[001-002],login");
}

TEST(HostList, KeepsOrderDuplicatesAndPaddingExactly) {
  EXPECT_EQ(compress({"n3", "n1", "n2"}), "n[3,1-2]");
  EXPECT_EQ(compress({"n1", "n1"}), "n[1,1]");
  EXPECT_EQ(compress({"n9", "n10", "n11"}), "n[9-11]");
  EXPECT_EQ(compress({"n09", "n10"}), "n[09-10]");
  EXPECT_EQ(compress({"n099", "n100", "n1000"}), "n[099-100,1000]");
  EXPECT_EQ(compress({"n1", "n01", "n001"}), "n[1,01,001]");
  EXPECT_EQ(compress({"n1", "m2", "n3"}), "n1,m2,n3");
  EXPECT_EQ(compress({"1", "2", "x"}), "[1-2],x");
  EXPECT_EQ(compress({"n1-ib3", "n1-ib4", "n2-ib3"}), "n1-ib[3-4],n2-ib3");
  compress({"rack1n01", "rack1n02", "a.b-c_d:9", "n18446744073709551615", "n0"});
  compress({"n" + std::string(30, '7'), "n" + std::string(30, '7')});  // too long: literal
}

TEST(HostList, CompressesAThousandsNodeGangToAFewBytes) {
  V gang;
  for (int i = 1; i <= 2048; ++i) {
    if (i == 17 || i == 1500) continue;  // failed nodes left out of the gang
    char name[32];
    std::snprintf(name, sizeof name, "gamma-%04d", i);
    gang.emplace_back(name);
  }
  EXPECT_EQ(compress(gang), "gamma-[0001-0016,0018-1499,1501-2048]");
}

TEST(HostList, NamesThatAListCannotHoldAreRefused) {
  for (const V& bad :
       {V{""}, V{"a b"}, V{"a,b"}, V{"n[1]"}, V{"n]"}, V{"tab\tname"}, V{"ok", "nl\n"}}) {
    EXPECT_FALSE(compress_hostlist(bad).has_value()) << bad.front();
  }
  EXPECT_FALSE(compress_hostlist(V(kMaxHostListNames + 1, "n1")).has_value());
}

}  // namespace
}  // namespace orch
