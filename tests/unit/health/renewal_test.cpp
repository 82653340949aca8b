// The exact renewal ETTR and its best interval (issue 45), against hand-worked values and the
// first-order formula of goodput.h.
#include "scheduler/health/renewal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "scheduler/health/goodput.h"

namespace orch {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(RenewalEttr, WithoutFailuresItIsTheIntervalOverTheIntervalAndTheSave) {
  // tau = 100 s of work, C = 40 s: 100 / 140 = 0.714, where the first order says 0.600.
  EXPECT_DOUBLE_EQ(renewal_ettr(40, 100, 600, kInf), 100.0 / 140.0);
  EXPECT_NEAR(expected_ettr(40, 100, 600, 1e300), 0.600, 1e-12);
  // A huge MTBF comes to the same, to rounding.
  EXPECT_NEAR(renewal_ettr(40, 100, 600, 1e15), 100.0 / 140.0, 1e-9);
  EXPECT_DOUBLE_EQ(renewal_ettr(0, 0, 600, kInf), 1.0);
}

TEST(RenewalEttr, MatchesTheRenewalFormulaByHand) {
  // M = 8 h, C = 60 s, R = 600 s, tau = 1,859 s: E[T] = M e^(R/M) (e^((tau+C)/M) - 1).
  const double m = 8 * 3600.0, c = 60, r = 600, tau = 1859;
  const double expected = m * std::exp(r / m) * (std::exp((tau + c) / m) - 1);
  EXPECT_NEAR(renewal_ettr(c, tau, r, m), tau / expected, 1e-12);
  // Above the first order, which counts a failure's loss and the saves more pessimistically.
  EXPECT_GT(renewal_ettr(c, tau, r, m), expected_ettr(c, tau, r, m));
  EXPECT_NEAR(renewal_ettr(c, tau, r, m), expected_ettr(c, tau, r, m), 0.01);
}

TEST(RenewalEttr, EdgeCasesAreBoundedAndNamed) {
  EXPECT_EQ(renewal_ettr(60, 1000, 600, 0), 0);
  EXPECT_EQ(renewal_ettr(60, 1000, 600, -5), 0);
  EXPECT_EQ(renewal_ettr(60, 0, 600, 3600), 0);  // costly saves, taken continuously
  EXPECT_NEAR(renewal_ettr(0, 0, 600, 3600), std::exp(-600.0 / 3600), 1e-12);  // free ones
  EXPECT_EQ(renewal_ettr(60, kInf, 600, 3600), 0);                             // never saves, fails
  EXPECT_EQ(renewal_ettr(60, kInf, 600, kInf), 1);  // never saves, never fails
  EXPECT_GE(renewal_ettr(1e6, 1, 1e6, 1), 0);
}

TEST(RenewalInterval, IsWhereTheExactEttrPeaksAndCloseToYoungsForCheapSaves) {
  const double m = 8 * 3600.0, c = 60, r = 600;
  const double best = renewal_interval_s(c, m);
  const double at = renewal_ettr(c, best, r, m);
  EXPECT_GE(at, renewal_ettr(c, best * 0.99, r, m));
  EXPECT_GE(at, renewal_ettr(c, best * 1.01, r, m));
  EXPECT_NEAR(best / young_interval_s(c, m), 1.0, 0.03);  // 0.979
  EXPECT_LT(best, young_interval_s(c, m));
  // Dear saves against a short MTBF: well short of Young's.
  EXPECT_LT(renewal_interval_s(1800, 3600), 0.9 * young_interval_s(1800, 3600));
  EXPECT_EQ(renewal_interval_s(0, m), 0);
  EXPECT_EQ(renewal_interval_s(c, 0), 0);
}

TEST(RenewalInterval, AtAQuarterOfTheBestTheFirstOrderIsTooPessimistic) {
  // The planner showed the first order around the advice (issue 45): at a quarter of the
  // interval it says several points less than the job gets.
  const double m = 0.5 * 3600, c = 60, r = 300;
  const double quarter = renewal_interval_s(c, m) / 4;
  EXPECT_GT(renewal_ettr(c, quarter, r, m) - expected_ettr(c, quarter, r, m), 0.03);
}

}  // namespace
}  // namespace orch
