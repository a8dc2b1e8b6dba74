#include <vector>

#include <gtest/gtest.h>

#include "health/telemetry_timeline.hpp"
#include "telemetry_samples.hpp"

namespace commcert {
namespace {

using test_support::sample_at;

TEST(TelemetryTimeline, OnePointPerWindowWithTheSamplesOfItsSpan) {
  // Window 0 ends at 1.0 s, window 1 at 2.0 s; a sample exactly at a window's end is that
  // window's, the next one is the following window's.
  const std::vector<TelemetrySample> samples = {
      sample_at(0.0, 1980, 300, 40, 0x0), sample_at(0.5, 1900, 690, 50, 0x0),
      sample_at(1.0, 1800, 700, 55, 0x4),  // sw_power_cap, still window 0
      sample_at(1.5, 1500, 702, 57, 0x4), sample_at(2.5, 345, 80, 45, 0x1)};  // after the last
  const std::vector<double> ends = {1.0, 2.0};
  const std::vector<double> tflops = {650, 600};
  const Json t = telemetry_timeline_json(samples, ends, tflops);
  ASSERT_FALSE(t.is_null());
  EXPECT_EQ(t["windows_per_point"], 1);
  EXPECT_EQ(t["t_s"], Json::array({1.0, 2.0}));
  EXPECT_EQ(t["tflops"], Json::array({650.0, 600.0}));
  EXPECT_EQ(t["sm_clock_mhz"], Json::array({1900.0, 1500.0}));  // medians of 3 and of 1
  EXPECT_EQ(t["power_w"], Json::array({690.0, 702.0}));
  EXPECT_EQ(t["temperature_c"], Json::array({55.0, 57.0}));  // the highest
  EXPECT_EQ(t["throttle"][0], Json::array({"sw_power_cap"}));
  EXPECT_EQ(t["throttle"][1], Json::array({"sw_power_cap"}));
}

TEST(TelemetryTimeline, WindowsWithoutSamplesHaveNullSensorsButKeepTheirThroughput) {
  // Without NVML there are no samples: the timeline still shows TFLOP/s over time.
  const std::vector<double> ends = {1.0, 2.0, 3.0};
  const std::vector<double> tflops = {700, 690, 710};
  const Json t = telemetry_timeline_json({}, ends, tflops);
  EXPECT_EQ(t["tflops"], Json::array({700.0, 690.0, 710.0}));
  for (const char* sensor : {"sm_clock_mhz", "mem_clock_mhz", "power_w", "temperature_c"})
    EXPECT_EQ(t[sensor], Json::array({nullptr, nullptr, nullptr})) << sensor;
  EXPECT_EQ(t["throttle"], Json::array({Json::array(), Json::array(), Json::array()}));
}

TEST(TelemetryTimeline, MoreWindowsThanPointsAreMergedIntoEqualRuns) {
  // 7 windows into at most 3 points: runs of 3, 3 and 1. A run's TFLOP/s is its harmonic mean
  // (each window does the same work): 100 and 300 take 2 and 2/3 units of time -> 150.
  const std::vector<double> ends = {1, 2, 3, 4, 5, 6, 7};
  const std::vector<double> tflops = {100, 300, 300, 100, 300, 300, 50};
  const Json t = telemetry_timeline_json({}, ends, tflops, 3);
  EXPECT_EQ(t["windows_per_point"], 3);
  EXPECT_EQ(t["t_s"], Json::array({3.0, 6.0, 7.0}));
  ASSERT_EQ(t["tflops"].size(), 3U);
  EXPECT_NEAR(t["tflops"][0].get<double>(), 3 / (1.0 / 100 + 2.0 / 300), 1e-9);
  EXPECT_NEAR(t["tflops"][2].get<double>(), 50, 1e-9);
  // Exactly max_points windows stay one point each; one more merges pairs.
  EXPECT_EQ(telemetry_timeline_json({}, std::vector<double>{1, 2, 3}, std::vector<double>{1, 1, 1},
                                    3)["windows_per_point"],
            1);
  EXPECT_EQ(telemetry_timeline_json({}, std::vector<double>{1, 2, 3, 4},
                                    std::vector<double>{1, 1, 1, 1}, 3)["windows_per_point"],
            2);
}

TEST(TelemetryTimeline, NoWindowOrMismatchedListsIsNull) {
  EXPECT_TRUE(telemetry_timeline_json({}, std::vector<double>{}, std::vector<double>{}).is_null());
  EXPECT_TRUE(
      telemetry_timeline_json({}, std::vector<double>{1, 2}, std::vector<double>{5}).is_null());
}

}  // namespace
}  // namespace commcert
