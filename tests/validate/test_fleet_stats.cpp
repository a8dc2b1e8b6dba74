#include <vector>

#include <gtest/gtest.h>

#include "validate/fleet_stats.hpp"

namespace commcert {
namespace {

TEST(RobustStats, MedianAndMadIgnoreOneWildValue) {
  const std::vector<double> values = {100, 101, 99, 102, 98, 100, 10};
  const RobustStats s = robust_stats(values);
  EXPECT_EQ(s.count, 7u);
  EXPECT_DOUBLE_EQ(s.median, 100);
  // |x - 100| = 0, 1, 1, 2, 2, 0, 90 -> median 1.
  EXPECT_DOUBLE_EQ(s.mad, 1);
  EXPECT_DOUBLE_EQ(s.min, 10);
  EXPECT_DOUBLE_EQ(s.max, 102);
}

TEST(RobustStats, EvenCountUsesTheMeanOfTheMiddlePair) {
  const std::vector<double> values = {1, 2, 3, 10};
  const RobustStats s = robust_stats(values);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.mad, 1.0);  // deviations 1.5, 0.5, 0.5, 7.5
}

TEST(RobustStats, EmptySampleIsAnError) {
  EXPECT_THROW((void)robust_stats(std::vector<double>{}), std::invalid_argument);
}

TEST(RobustZ, IsTheModifiedZScore) {
  RobustStats s;
  s.median = 100;
  s.mad = 2;
  ASSERT_TRUE(robust_z(90, s));
  EXPECT_NEAR(*robust_z(90, s), 0.6745 * -10 / 2, 1e-12);
  EXPECT_NEAR(*robust_z(100, s), 0, 1e-12);
  s.mad = 0;
  EXPECT_FALSE(robust_z(90, s).has_value());
}

TEST(ShortfallPct, IsMeasuredOnTheBadSide) {
  EXPECT_DOUBLE_EQ(shortfall_pct(92, 100, true), 8);
  EXPECT_DOUBLE_EQ(shortfall_pct(108, 100, true), -8);
  EXPECT_DOUBLE_EQ(shortfall_pct(90, 80, false), 12.5);
  EXPECT_DOUBLE_EQ(shortfall_pct(5, 0, true), 0);
}

}  // namespace
}  // namespace commcert
