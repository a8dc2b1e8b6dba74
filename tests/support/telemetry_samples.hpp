#pragma once

// A telemetry sample as the burn's sampler takes one, for the telemetry tests.

#include <cstdint>

#include "health/telemetry.hpp"

namespace commcert::test_support {

// Memory clock at an H200's 3201 MHz; `reasons` is NVML's clock-event bit mask.
inline TelemetrySample sample_at(double time_s, unsigned sm_clock, double power,
                                 unsigned temperature, std::uint64_t reasons) {
  TelemetrySample sample;
  sample.time_s = time_s;
  sample.sm_clock_mhz = sm_clock;
  sample.mem_clock_mhz = 3201;
  sample.power_w = power;
  sample.temperature_c = temperature;
  sample.clock_event_reasons = reasons;
  return sample;
}

}  // namespace commcert::test_support
