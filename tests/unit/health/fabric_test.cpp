// The fabric, pair by pair: the rounds every node meets its partners in, and what the pairs'
// bus bandwidths say about nodes and links.
#include "scheduler/health/fabric.h"

#include <gmock/gmock.h>

#include <map>
#include <set>

namespace orch {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> names(int n) {
  std::vector<std::string> out;
  for (int i = 1; i <= n; ++i) out.push_back("n" + std::to_string(i));
  return out;
}

// Every pair of the schedule measured at `healthy`, except where `figure` says otherwise.
std::vector<FabricMeasure> measure(const std::vector<FabricRound>& rounds, double healthy,
                                   const std::map<std::string, double>& node_ratio,
                                   const std::map<FabricPair, double>& pair_ratio = {}) {
  std::vector<FabricMeasure> out;
  for (const auto& round : rounds) {
    for (const auto& [a, b] : round) {
      double v = healthy;
      if (node_ratio.count(a)) v *= node_ratio.at(a);
      if (node_ratio.count(b)) v *= node_ratio.at(b);
      if (pair_ratio.count({a, b})) v *= pair_ratio.at({a, b});
      out.push_back({a, b, v, ""});
    }
  }
  return out;
}

TEST(FabricSchedule, EveryRoundIsAMatchingAndNoPairMeetsTwice) {
  for (int n : {2, 3, 5, 8, 13, 32}) {
    auto rounds = fabric_schedule(names(n), 0);
    std::set<FabricPair> seen;
    std::map<std::string, int> partners;
    for (const auto& round : rounds) {
      std::set<std::string> busy;
      for (const auto& [a, b] : round) {
        EXPECT_TRUE(busy.insert(a).second) << n << ": " << a << " twice in a round";
        EXPECT_TRUE(busy.insert(b).second) << n << ": " << b << " twice in a round";
        EXPECT_TRUE(seen.insert({a, b}).second) << n << ": " << a << "-" << b << " met twice";
        ++partners[a];
        ++partners[b];
      }
      EXPECT_GE(busy.size(), static_cast<std::size_t>(n - n % 2)) << n;
    }
    // Each node met as many partners as rounds, less the one it may have sat out.
    for (const auto& node : names(n)) {
      EXPECT_GE(partners[node], static_cast<int>(rounds.size()) - (n % 2)) << n << " " << node;
    }
  }
}

TEST(FabricSchedule, RoundsAreLog2OfTheNodesAtLeastTwoAndAtMostTheTournament) {
  EXPECT_EQ(default_fabric_rounds(0), 0);
  EXPECT_EQ(default_fabric_rounds(1), 0);
  EXPECT_EQ(default_fabric_rounds(2), 1);
  EXPECT_EQ(default_fabric_rounds(3), 2);
  EXPECT_EQ(default_fabric_rounds(8), 3);
  EXPECT_EQ(default_fabric_rounds(9), 4);
  EXPECT_EQ(default_fabric_rounds(1000), 10);
  EXPECT_EQ(fabric_schedule(names(6), 3).size(), 3u);
  EXPECT_EQ(fabric_schedule(names(4), 10).size(), 3u);  // 4 nodes have 3 rounds of partners
  EXPECT_TRUE(fabric_schedule(names(1), 0).empty());
}

TEST(FabricSchedule, TheSameNodesGiveTheSameRounds) {
  EXPECT_EQ(fabric_schedule(names(7), 0), fabric_schedule(names(7), 0));
}

TEST(FabricJudge, ANodeWhoseEveryPairingIsSlowIsSlowAndItsPartnersAreNot) {
  auto nodes = names(8);
  auto rounds = fabric_schedule(nodes, 0);
  auto v = judge_fabric(nodes, measure(rounds, 40.0, {{"n7", 0.3}}), {});
  ASSERT_TRUE(v.median_gb_s);
  EXPECT_DOUBLE_EQ(*v.median_gb_s, 40.0);
  for (const auto& n : v.nodes) {
    EXPECT_EQ(n.passed, n.node != "n7") << n.reason;
  }
  EXPECT_THAT(v.nodes[6].reason,
              HasSubstr("every pairing slow, best 12.0 GB/s, 30% of the median pair (40.0 GB/s)"));
  EXPECT_EQ(v.nodes[6].pairings, 3);
  // The slow node's pairs are its fault, not slow pairs of their own.
  EXPECT_TRUE(v.slow_pairs.empty());
}

TEST(FabricJudge, APairSlowAloneIsNamedWithBothNodesAndItsFigure) {
  auto nodes = names(8);
  auto rounds = fabric_schedule(nodes, 0);
  FabricPair planted = rounds[1][2];
  auto v = judge_fabric(nodes, measure(rounds, 40.3, {}, {{planted, 0.3}}), {});
  for (const auto& n : v.nodes) EXPECT_TRUE(n.passed) << n.reason;
  ASSERT_EQ(v.slow_pairs.size(), 1u);
  EXPECT_EQ(v.slow_pairs[0].a, planted.first);
  EXPECT_EQ(v.slow_pairs[0].b, planted.second);
  EXPECT_EQ(v.slow_pairs[0].reason, planted.first + " <-> " + planted.second +
                                        ": 12.1 GB/s, 30% of the median pair (40.3 GB/s)");
}

TEST(FabricJudge, APairJustAboveTheRatioPassesAndOneJustBelowIsSlow) {
  std::vector<std::string> nodes = {"a", "b", "c", "d"};
  std::vector<FabricMeasure> m = {{"a", "b", 100, ""}, {"c", "d", 100, ""}, {"a", "c", 100, ""},
                                  {"b", "d", 61, ""},  {"a", "d", 100, ""}, {"b", "c", 59, ""}};
  auto v = judge_fabric(nodes, m, FabricPolicy{0.6});
  ASSERT_EQ(v.slow_pairs.size(), 1u);
  EXPECT_EQ(v.slow_pairs[0].a, "b");
  EXPECT_EQ(v.slow_pairs[0].b, "c");
}

TEST(FabricJudge, AFailedPairingCountsAsSlowAndSaysWhy) {
  std::vector<std::string> nodes = {"a", "b", "c", "d"};
  std::vector<FabricMeasure> m = {
      {"a", "b", 40, ""}, {"c", "d", 40, ""}, {"a", "c", std::nullopt, "timed out after 60 s"},
      {"b", "d", 40, ""}, {"a", "d", 40, ""}, {"b", "c", 40, ""}};
  auto v = judge_fabric(nodes, m, {});
  ASSERT_EQ(v.slow_pairs.size(), 1u);
  EXPECT_EQ(v.slow_pairs[0].reason,
            "a <-> c: failed: timed out after 60 s (the median pair: 40.0 GB/s)");
}

TEST(FabricJudge, ANodeWithNoPairingIsNotJudged) {
  auto v = judge_fabric({"a", "b", "c"}, {{"a", "b", 40, ""}}, {});
  EXPECT_TRUE(v.nodes[2].passed);
  EXPECT_EQ(v.nodes[2].reason, "fabric: no pairing measured");
  EXPECT_EQ(v.nodes[2].pairings, 0);
}

TEST(FabricJudge, WithNoFigureAtAllEveryPairingFailed) {
  auto v = judge_fabric({"a", "b"}, {{"a", "b", std::nullopt, "no output"}}, {});
  EXPECT_FALSE(v.median_gb_s);
  EXPECT_FALSE(v.nodes[0].passed);
  EXPECT_FALSE(v.nodes[1].passed);
}

}  // namespace
}  // namespace orch
