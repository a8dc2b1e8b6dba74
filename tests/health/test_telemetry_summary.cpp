#include <gtest/gtest.h>

#include "health/clock_event_reasons.hpp"
#include "health/telemetry.hpp"
#include "telemetry_samples.hpp"

namespace commcert {
namespace {

TEST(ClockEventReasons, DecodesEveryBitSetNotJustExactValues) {
  // sw_power_cap + sw_thermal at once is a normal state under a GEMM burn.
  EXPECT_EQ(clock_event_reason_names(0x24),
            (std::vector<std::string>{"sw_power_cap", "sw_thermal"}));
  EXPECT_EQ(clock_event_reason_names(0x1), std::vector<std::string>{"gpu_idle"});
  EXPECT_TRUE(clock_event_reason_names(0).empty());
  EXPECT_EQ(clock_event_reason_names(0x48),
            (std::vector<std::string>{"hw_slowdown", "hw_thermal"}));
  EXPECT_EQ(clock_event_reason_names(0x80 | 0x200),
            (std::vector<std::string>{"hw_power_brake", "unknown_0x200"}));
}

using test_support::sample_at;

TEST(TelemetrySummary, SummarisesSensorsAndChargesReasonsWithTheirTime) {
  TelemetrySeries series;
  series.interval_s = 0.1;
  series.samples = {sample_at(0.0, 1980, 120, 40, 0x1), sample_at(0.1, 1980, 690, 60, 0x0),
                    sample_at(0.2, 1830, 700, 70, 0x4), sample_at(0.4, 1755, 701, 74, 0x24)};
  series.power_limit_w = 700;
  series.ecc_before = {5, 0};
  series.ecc_after = {7, 0};
  series.xid_events = std::vector<XidEvent>{{94, "2026-11-22T00:00:00.000Z"}};
  const Json t = telemetry_json(series);
  EXPECT_EQ(t["samples"], 4);
  EXPECT_EQ(t["sm_clock_mhz"]["min"], 1755);
  EXPECT_EQ(t["sm_clock_mhz"]["max"], 1980);
  EXPECT_DOUBLE_EQ(t["sm_clock_mhz"]["median"].get<double>(), 1905);
  EXPECT_DOUBLE_EQ(t["power_w"]["max"].get<double>(), 701);
  EXPECT_DOUBLE_EQ(t["power_limit_w"].get<double>(), 700);
  EXPECT_EQ(t["temperature_c"]["max"], 74);
  // gpu_idle only at the first sample (no interval before it); sw_power_cap for 0.1 + 0.2 s;
  // sw_thermal for the last 0.2 s.
  ASSERT_EQ(t["throttle"].size(), 2u);
  EXPECT_EQ(t["throttle"][0]["reason"], "sw_power_cap");
  EXPECT_NEAR(t["throttle"][0]["seconds"].get<double>(), 0.3, 1e-9);
  EXPECT_EQ(t["throttle"][1]["reason"], "sw_thermal");
  EXPECT_NEAR(t["throttle"][1]["seconds"].get<double>(), 0.2, 1e-9);
  EXPECT_EQ(t["ecc_delta"]["corrected"], 2);
  EXPECT_EQ(t["ecc_delta"]["uncorrected"], 0);
  EXPECT_EQ(t["xid_events"][0]["xid"], 94);
}

TEST(TelemetrySummary, WhatNvmlCouldNotReadIsNull) {
  TelemetrySeries series;
  TelemetrySample s;
  s.time_s = 0;
  series.samples = {s, s};
  const Json t = telemetry_json(series);
  EXPECT_EQ(t["samples"], 2);
  EXPECT_TRUE(t["sm_clock_mhz"]["min"].is_null());
  EXPECT_TRUE(t["power_w"]["max"].is_null());
  EXPECT_TRUE(t["power_limit_w"].is_null());
  EXPECT_TRUE(t["ecc_delta"]["corrected"].is_null());
  EXPECT_TRUE(t["xid_events"].is_null());
  EXPECT_TRUE(t["throttle"].empty());
}

}  // namespace
}  // namespace commcert
