#include <vector>

#include <gtest/gtest.h>

#include "bench/throughput.hpp"

namespace commcert {
namespace {

TEST(Throughput, BandwidthIsBytesOverSecondsAndMissingForNoTime) {
  EXPECT_DOUBLE_EQ(*bytes_per_second(2e9, 0.5), 4e9);
  EXPECT_FALSE(bytes_per_second(1e9, 0).has_value());
  EXPECT_FALSE(bytes_per_second(1e9, -1).has_value());
}

TEST(Throughput, MedianBandwidthUsesTheMedianSampleAndIgnoresBrokenOnes) {
  const std::vector<double> seconds = {1.0, 0.5, 2.0, 0.0};  // 0: an event that never timed
  // Rates 1, 2, 0.5 GB/s -> median 1 GB/s.
  EXPECT_DOUBLE_EQ(*median_bandwidth(seconds, 1e9), 1e9);
  EXPECT_FALSE(median_bandwidth(std::vector<double>{}, 1e9).has_value());
}

TEST(Throughput, RatioIsMissingWhenEitherSideIs) {
  EXPECT_DOUBLE_EQ(*ratio(3.0, 4.0), 0.75);
  EXPECT_FALSE(ratio(std::nullopt, 4.0).has_value());
  EXPECT_FALSE(ratio(3.0, std::nullopt).has_value());
  EXPECT_FALSE(ratio(3.0, 0.0).has_value());
}

TEST(Throughput, BestOfSkipsMissingValues) {
  EXPECT_DOUBLE_EQ(*best_of({std::nullopt, 2.0, 5.0}), 5.0);
  EXPECT_FALSE(best_of({std::nullopt, std::nullopt}).has_value());
}

TEST(Throughput, TflopsAndWindowSummary) {
  EXPECT_DOUBLE_EQ(*tflops(2e12, 2.0), 1.0);
  const std::vector<double> windows = {700, 710, 690, 705};
  const Json summary = window_summary_json(windows);
  EXPECT_EQ(summary["count"], 4);
  EXPECT_DOUBLE_EQ(summary["min"].get<double>(), 690);
  EXPECT_DOUBLE_EQ(summary["p50"].get<double>(), 702.5);
  EXPECT_DOUBLE_EQ(summary["max"].get<double>(), 710);
  EXPECT_TRUE(window_summary_json(std::vector<double>{}).is_null());
}

}  // namespace
}  // namespace commcert
