// Student's t quantiles from Boost.Math against the values printed in t tables, and the 95%
// multiplier the report's intervals use.
#include "simulator/students_t.h"

#include <gtest/gtest.h>

namespace orch::sim {
namespace {

TEST(StudentsT, QuantilesMatchPrintedTables) {
  // Two-sided 95%: t(0.975, df), as tables print it (three decimals).
  EXPECT_NEAR(students_t_quantile(0.975, 1), 12.706, 5e-4);
  EXPECT_NEAR(students_t_quantile(0.975, 2), 4.303, 5e-4);
  EXPECT_NEAR(students_t_quantile(0.975, 10), 2.228, 5e-4);
  EXPECT_NEAR(students_t_quantile(0.975, 30), 2.042, 5e-4);
  EXPECT_NEAR(students_t_quantile(0.975, 120), 1.980, 5e-4);
  // Other levels: one-sided 95% and two-sided 99%.
  EXPECT_NEAR(students_t_quantile(0.95, 10), 1.812, 5e-4);
  EXPECT_NEAR(students_t_quantile(0.995, 5), 4.032, 5e-4);
  // Symmetric about 0; df 1 is the Cauchy distribution, whose quantile is tan(pi (p - 1/2)).
  EXPECT_DOUBLE_EQ(students_t_quantile(0.5, 7), 0);
  EXPECT_NEAR(students_t_quantile(0.025, 10), -students_t_quantile(0.975, 10), 1e-12);
  EXPECT_NEAR(students_t_quantile(0.975, 1), 12.706204736174698, 1e-9);
}

TEST(StudentsT, The95MultiplierIsExactAndNoneForOneValue) {
  EXPECT_DOUBLE_EQ(t95(0), 0);
  // A printed table's values, to its three decimals.
  EXPECT_NEAR(t95(1), 12.706, 5e-4);
  EXPECT_NEAR(t95(2), 4.303, 5e-4);
  EXPECT_NEAR(t95(10), 2.228, 5e-4);
  EXPECT_NEAR(t95(19), 2.093, 5e-4);  // 20 seeds, the examples' default
  EXPECT_NEAR(t95(30), 2.042, 5e-4);
  // Past 30, where the hand-typed table jumped to 2.00, 1.98 and 1.96.
  EXPECT_NEAR(t95(40), 2.021, 5e-4);
  EXPECT_NEAR(t95(60), 2.000, 5e-4);
  EXPECT_NEAR(t95(1000), 1.962, 5e-4);
  // Not rounded: more digits than any table prints.
  EXPECT_NEAR(t95(2), 4.302652729911275, 1e-9);
}

}  // namespace
}  // namespace orch::sim
