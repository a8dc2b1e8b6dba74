#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "core/stats.hpp"

namespace commcert {
namespace {

std::vector<double> one_to(int n) {
  std::vector<double> values(static_cast<std::size_t>(n));
  std::iota(values.begin(), values.end(), 1.0);
  return values;
}

TEST(Summarize, KnownSample) {
  // 2 4 4 4 5 5 7 9: mean 5, squared deviations sum to 32, so the sample variance is 32/7.
  const std::vector<double> samples = {4, 9, 2, 5, 4, 7, 4, 5};  // deliberately unsorted
  const SampleSummary s = summarize(samples);
  EXPECT_EQ(s.count, 8u);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_DOUBLE_EQ(s.p99, 9);  // fewer than 100 samples: p99 is the maximum
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(32.0 / 7.0));
  EXPECT_DOUBLE_EQ(s.cv, std::sqrt(32.0 / 7.0) / 5.0);
}

TEST(Summarize, SingleSampleHasNoSpread) {
  const std::vector<double> samples = {3.5};
  const SampleSummary s = summarize(samples);
  EXPECT_EQ(s.count, 1u);
  EXPECT_DOUBLE_EQ(s.min, 3.5);
  EXPECT_DOUBLE_EQ(s.max, 3.5);
  EXPECT_DOUBLE_EQ(s.mean, 3.5);
  EXPECT_DOUBLE_EQ(s.median, 3.5);
  EXPECT_DOUBLE_EQ(s.p99, 3.5);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
  EXPECT_DOUBLE_EQ(s.cv, 0);
}

TEST(Summarize, CvIsZeroWhenTheMeanIsZero) {
  const std::vector<double> samples = {-1, 1};
  const SampleSummary s = summarize(samples);
  EXPECT_DOUBLE_EQ(s.mean, 0);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(s.cv, 0);
}

TEST(Summarize, P99IsNearestRankAsNcclTestsComputesIt) {
  // nccl-tests: index = min(n - 1, ceil(99 n / 100) - 1) into the sorted sample.
  for (const int n : {1, 2, 50, 99, 100, 101, 150, 200, 1000, 1001, 10000}) {
    const auto values = one_to(n);
    const int rank = std::min(n, (99 * n + 99) / 100);
    EXPECT_DOUBLE_EQ(summarize(values).p99, static_cast<double>(rank)) << "n=" << n;
  }
}

TEST(Summarize, EmptySampleThrows) {
  EXPECT_THROW((void)summarize(std::vector<double>{}), std::invalid_argument);
}

TEST(PercentileSorted, NearestRank) {
  const auto values = one_to(10);  // 1..10
  EXPECT_DOUBLE_EQ(percentile_sorted(values, 0), 1);
  EXPECT_DOUBLE_EQ(percentile_sorted(values, 10), 1);
  EXPECT_DOUBLE_EQ(percentile_sorted(values, 11), 2);
  EXPECT_DOUBLE_EQ(percentile_sorted(values, 50), 5);
  EXPECT_DOUBLE_EQ(percentile_sorted(values, 51), 6);
  EXPECT_DOUBLE_EQ(percentile_sorted(values, 90), 9);
  EXPECT_DOUBLE_EQ(percentile_sorted(values, 99), 10);
  EXPECT_DOUBLE_EQ(percentile_sorted(values, 100), 10);
}

TEST(PercentileSorted, ClampsOutOfRangePercentiles) {
  const auto values = one_to(4);
  EXPECT_DOUBLE_EQ(percentile_sorted(values, -5), 1);
  EXPECT_DOUBLE_EQ(percentile_sorted(values, 250), 4);
}

TEST(PercentileSorted, IntegerPercentilesOfLargeSamples) {
  for (const int n : {100, 1000, 10000}) {
    const auto values = one_to(n);
    for (const int p : {1, 25, 50, 75, 90, 95, 99}) {
      EXPECT_DOUBLE_EQ(percentile_sorted(values, p), static_cast<double>(p * n / 100))
          << "n=" << n << " p=" << p;
    }
  }
}

TEST(PercentileSorted, EmptySampleThrows) {
  EXPECT_THROW((void)percentile_sorted(std::vector<double>{}, 50), std::invalid_argument);
}

TEST(Median, OddAndEvenSizes) {
  EXPECT_DOUBLE_EQ(median(std::vector<double>{7}), 7);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{10, 1}), 5.5);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{5, 5, 1, 9, 5}), 5);
}

TEST(Median, EmptySampleThrows) {
  EXPECT_THROW((void)median(std::vector<double>{}), std::invalid_argument);
}

TEST(StudentT95, TableValues) {
  // Two-sided 95 % (0.975 quantile) from any statistics table.
  EXPECT_DOUBLE_EQ(student_t95(1), 12.706);
  EXPECT_DOUBLE_EQ(student_t95(2), 4.303);
  EXPECT_DOUBLE_EQ(student_t95(3), 3.182);
  EXPECT_DOUBLE_EQ(student_t95(4), 2.776);
  EXPECT_DOUBLE_EQ(student_t95(5), 2.571);
  EXPECT_DOUBLE_EQ(student_t95(10), 2.228);
  EXPECT_DOUBLE_EQ(student_t95(19), 2.093);
  EXPECT_DOUBLE_EQ(student_t95(20), 2.086);
  EXPECT_DOUBLE_EQ(student_t95(29), 2.045);
  EXPECT_DOUBLE_EQ(student_t95(30), 2.042);
}

TEST(StudentT95, DecreasesWithDegreesOfFreedom) {
  for (std::size_t df = 1; df < 2000; ++df) {
    EXPECT_GT(student_t95(df), student_t95(df + 1)) << "df=" << df;
  }
  EXPECT_GT(student_t95(1000000), 1.959964);
}

TEST(StudentT95, LargeSampleApproximationWithinHalfAPercent) {
  // 0.975 quantiles of Student's t (scipy.stats.t.ppf(0.975, df)).
  const struct {
    std::size_t df;
    double quantile;
  } known[] = {{31, 2.039513},  {35, 2.030108},  {40, 2.021075},   {50, 2.008559},
               {60, 2.000298},  {80, 1.990063},  {100, 1.983972},  {120, 1.979930},
               {200, 1.971896}, {500, 1.964720}, {1000, 1.962339}, {100000, 1.959988}};
  for (const auto& k : known) {
    EXPECT_NEAR(student_t95(k.df), k.quantile, 0.005 * k.quantile) << "df=" << k.df;
  }
}

TEST(StudentT95, ZeroDegreesOfFreedomThrows) {
  EXPECT_THROW((void)student_t95(0), std::invalid_argument);
}

TEST(Ci95HalfWidth, StudentTimesStandardError) {
  const std::vector<double> samples = {4, 9, 2, 5, 4, 7, 4, 5};
  const SampleSummary s = summarize(samples);
  const auto half_width = ci95_half_width(s);
  ASSERT_TRUE(half_width.has_value());
  // 7 degrees of freedom: t = 2.365.
  EXPECT_DOUBLE_EQ(*half_width, 2.365 * std::sqrt(32.0 / 7.0) / std::sqrt(8.0));
}

TEST(Ci95HalfWidth, NoIntervalFromOneSample) {
  EXPECT_FALSE(ci95_half_width(summarize(std::vector<double>{1.0})).has_value());
}

}  // namespace
}  // namespace commcert

namespace commcert {
namespace {

TEST(PercentileSorted, FractionalPercentileIsNotPushedToTheNextSample) {
  std::vector<double> samples(1000);
  for (std::size_t i = 0; i < samples.size(); ++i)
    samples[i] = static_cast<double>(i + 1);
  // Nearest rank of p99.9 over 1000 samples is the 999th, not the maximum.
  EXPECT_EQ(percentile_sorted(samples, 99.9), 999.0);
  EXPECT_EQ(percentile_sorted(samples, 99.0), 990.0);
}

}  // namespace
}  // namespace commcert
