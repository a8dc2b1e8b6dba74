#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/json.hpp"
#include "health/telemetry.hpp"

namespace commcert {

// The burn record's `timeline` (docs/records.md, kind burn): TFLOP/s and the GPU's sensors over
// time, one point per measurement window, or per run of consecutive windows where there are more
// than `max_points` of them (an hour's burn stays a few tens of kilobytes per GPU).
//
// Window i ends `window_end_s[i]` after the burn started and measured `window_tflops[i]`; the
// sampler started with the burn (burn_command.cpp starts it as the GPUs are released), so a
// sample at `time_s` belongs to the point whose span (previous end, end] holds it. Per point:
// TFLOP/s of its windows together (their harmonic mean: every window does the same work),
// median SM and memory clock, median power, highest temperature, and every clock-event reason
// seen in its samples. A sensor with no sample in a point is null there.
//
// Null when there is no window (or the two lists differ in length: nothing to place in time).
[[nodiscard]] Json telemetry_timeline_json(const std::vector<TelemetrySample>& samples,
                                           std::span<const double> window_end_s,
                                           std::span<const double> window_tflops,
                                           std::size_t max_points = 600);

}  // namespace commcert
