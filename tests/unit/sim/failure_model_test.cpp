// Simulated failures (issue 19): each law has the mean it was given, lemons fail as much more
// often as their multiplier says, causes come in their shares, and a seed is a trace.
#include <gmock/gmock.h>

#include <cmath>
#include <map>

#include "simulator/world/failure_model.h"

namespace orch::sim {
namespace {

constexpr double kDay = 86'400;

CauseMix llama3() {
  return CauseMix::make(llama3_cause_mix()).value();
}

// The mean gap between failures of each node, over n failures of the whole trace.
std::vector<double> mean_gaps(FailureTrace& trace, int n) {
  std::vector<double> last(trace.nodes(), 0), total(trace.nodes(), 0);
  std::vector<int> count(trace.nodes(), 0);
  for (int i = 0; i < n; ++i) {
    const NodeFailure f = trace.next();
    total[f.node] += f.at_s - last[f.node];
    last[f.node] = f.at_s;
    ++count[f.node];
  }
  std::vector<double> out;
  for (std::size_t i = 0; i < total.size(); ++i) out.push_back(total[i] / count[i]);
  return out;
}

TEST(SimRandom, AStreamIsTheSameForItsSeedAndDiffersFromItsNeighbours) {
  SimRandom a(42, 7), b(42, 7), other_stream(42, 8), other_seed(43, 7);
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    EXPECT_NE(x, other_stream.next_u64());
    EXPECT_NE(x, other_seed.next_u64());
  }
}

TEST(SimRandom, UniformDrawsStayInsideTheOpenIntervalAndAverageOneHalf) {
  SimRandom r(1, 0);
  double sum = 0;
  for (int i = 0; i < 200'000; ++i) {
    const double u = r.uniform01();
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 200'000, 0.5, 0.005);
}

TEST(FailureTrace, ExponentialNodesFailAtTheirMeanTimeBetweenFailures) {
  const CauseMix causes = llama3();
  FailureLaw law{FailureLaw::Kind::exponential, 5 * kDay};
  auto trace = FailureTrace::make(7, law, std::vector<SimNodeSpec>(4), &causes).value();
  for (double mean : mean_gaps(trace, 80'000)) EXPECT_NEAR(mean / (5 * kDay), 1.0, 0.02);
}

TEST(FailureTrace, WeibullNodesHaveTheMeanTheirLawGivesWhateverTheShape) {
  const CauseMix causes = llama3();
  for (double shape : {0.7, 1.5}) {
    FailureLaw law{FailureLaw::Kind::weibull, 3 * kDay, shape};
    auto trace = FailureTrace::make(11, law, std::vector<SimNodeSpec>(4), &causes).value();
    for (double mean : mean_gaps(trace, 80'000)) {
      EXPECT_NEAR(mean / (3 * kDay), 1.0, 0.03) << "shape " << shape;
    }
  }
}

TEST(FailureTrace, ALemonFailsAsManyTimesMoreOftenAsItsMultiplier) {
  const CauseMix causes = llama3();
  FailureLaw law{FailureLaw::Kind::exponential, 10 * kDay};
  std::vector<SimNodeSpec> nodes(2);
  nodes[1].rate_multiplier = 20;  // the lemon
  auto trace = FailureTrace::make(3, law, nodes, &causes).value();
  const auto means = mean_gaps(trace, 100'000);
  EXPECT_NEAR(means[0] / means[1], 20.0, 1.0);
}

TEST(FailureTrace, FailuresComeInTimeOrderAndTheFleetFailsAsOftenAsItsSizeSays) {
  const CauseMix causes = llama3();
  FailureLaw law{FailureLaw::Kind::exponential, 30 * kDay};
  auto trace = FailureTrace::make(5, law, std::vector<SimNodeSpec>(1000), &causes).value();
  double last = 0;
  int failures = 0;
  while (trace.next_at() < 90 * kDay) {
    const NodeFailure f = trace.next();
    ASSERT_GE(f.at_s, last);
    last = f.at_s;
    ++failures;
  }
  EXPECT_NEAR(failures, 3000, 3 * std::sqrt(3000.0));  // 1,000 nodes x 90 days / 30 days
}

TEST(FailureTrace, CausesComeInTheSharesOfTheirMix) {
  const CauseMix causes = llama3();
  FailureLaw law{FailureLaw::Kind::exponential, kDay};
  auto trace = FailureTrace::make(9, law, std::vector<SimNodeSpec>(16), &causes).value();
  std::map<std::string, int> seen;
  constexpr int kN = 200'000;
  for (int i = 0; i < kN; ++i) ++seen[*trace.next().cause];
  for (const auto& c : llama3_cause_mix()) {
    EXPECT_NEAR(100.0 * seen[c.name] / kN, c.share, 0.5) << c.name;
  }
}

TEST(FailureTrace, TheSameSeedGivesTheSameTraceAndANodeIgnoresTheOthers) {
  const CauseMix causes = llama3();
  FailureLaw law{FailureLaw::Kind::weibull, 2 * kDay, 0.8};
  auto a = FailureTrace::make(21, law, std::vector<SimNodeSpec>(8), &causes).value();
  auto b = FailureTrace::make(21, law, std::vector<SimNodeSpec>(8), &causes).value();
  auto other = FailureTrace::make(22, law, std::vector<SimNodeSpec>(8), &causes).value();
  bool differs = false;
  std::vector<double> node0;
  for (int i = 0; i < 5000; ++i) {
    const NodeFailure x = a.next();
    const NodeFailure y = b.next();
    ASSERT_EQ(x.at_s, y.at_s);
    ASSERT_EQ(x.node, y.node);
    ASSERT_EQ(*x.cause, *y.cause);
    differs = differs || other.next().at_s != x.at_s;
    if (x.node == 0) node0.push_back(x.at_s);
  }
  EXPECT_TRUE(differs);
  // Node 0's failures are its own: a fleet of 3 with the same seed gives it the same times.
  auto small = FailureTrace::make(21, law, std::vector<SimNodeSpec>(3), &causes).value();
  std::vector<double> small0;
  while (small0.size() < node0.size()) {
    const NodeFailure f = small.next();
    if (f.node == 0) small0.push_back(f.at_s);
  }
  EXPECT_EQ(small0, node0);
}

TEST(FailureTrace, BadLawsRatesAndMixesAreRefusedSayingWhy) {
  const CauseMix causes = llama3();
  auto no_mean = FailureTrace::make(1, {FailureLaw::Kind::exponential, 0}, {{}}, &causes);
  ASSERT_FALSE(no_mean.ok());
  EXPECT_THAT(no_mean.error().message, ::testing::HasSubstr("mean time between failures"));
  auto no_shape = FailureTrace::make(1, {FailureLaw::Kind::weibull, kDay, -1}, {{}}, &causes);
  ASSERT_FALSE(no_shape.ok());
  EXPECT_THAT(no_shape.error().message, ::testing::HasSubstr("shape above 0"));
  auto bad_rate = FailureTrace::make(1, {FailureLaw::Kind::exponential, kDay},
                                     {SimNodeSpec{1}, SimNodeSpec{0}}, &causes);
  ASSERT_FALSE(bad_rate.ok());
  EXPECT_THAT(bad_rate.error().message, ::testing::HasSubstr("node 1"));
  EXPECT_FALSE(CauseMix::make({}).ok());
  EXPECT_FALSE(CauseMix::make({{"a", -1}}).ok());
  EXPECT_FALSE(CauseMix::make({{"a", 0}, {"b", 0}}).ok());
  EXPECT_FALSE(CauseMix::make({{"a", std::nan("")}}).ok());
}

// Failures of a fleet of 20,000 Weibull nodes (shape 0.5, MTBF 1,000 h) in its first 10 hours.
int failures_in_first_hours(bool fresh_nodes, double hours) {
  const CauseMix causes = llama3();
  FailureLaw law{FailureLaw::Kind::weibull, 1000 * 3600.0, 0.5};
  law.fresh_nodes = fresh_nodes;
  auto trace = FailureTrace::make(3, law, std::vector<SimNodeSpec>(20'000), &causes).value();
  int n = 0;
  while (trace.next_at() < hours * 3600) {
    trace.next();
    ++n;
  }
  return n;
}

TEST(FailureTrace, AWeibullFleetStartsInSteadyStateUnlessItsNodesAreFresh) {
  // In steady state a renewal process fails at 1/MTBF from the start: 20,000 x 10 / 1,000 = 200.
  EXPECT_NEAR(failures_in_first_hours(false, 10), 200, 45);
  // New nodes all at once: 1 - exp(-sqrt(10 / 500)) = 13% of them fail in those hours (2,640),
  // and a new node's second failure comes early too: about 2,950, fifteen times the steady rate.
  EXPECT_GT(failures_in_first_hours(true, 10), 2640);
}

}  // namespace
}  // namespace orch::sim
