#include "health/telemetry_timeline.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "core/stats.hpp"
#include "health/clock_event_reasons.hpp"

namespace commcert {
namespace {

// The samples of one point, sensor by sensor.
struct PointReadings {
  std::vector<double> sm_clock_mhz, mem_clock_mhz, power_w, temperature_c;
  std::vector<std::string> reasons;  // in order of first appearance

  void add(const TelemetrySample& sample) {
    if (sample.sm_clock_mhz) sm_clock_mhz.push_back(*sample.sm_clock_mhz);
    if (sample.mem_clock_mhz) mem_clock_mhz.push_back(*sample.mem_clock_mhz);
    if (sample.power_w) power_w.push_back(*sample.power_w);
    if (sample.temperature_c) temperature_c.push_back(*sample.temperature_c);
    if (!sample.clock_event_reasons) return;
    for (auto& name : clock_event_reason_names(*sample.clock_event_reasons)) {
      if (std::find(reasons.begin(), reasons.end(), name) == reasons.end())
        reasons.push_back(std::move(name));
    }
  }
};

Json median_or_null(const std::vector<double>& values) {
  return values.empty() ? Json(nullptr) : Json(median(values));
}

Json max_or_null(const std::vector<double>& values) {
  return values.empty() ? Json(nullptr) : Json(*std::max_element(values.begin(), values.end()));
}

}  // namespace

Json telemetry_timeline_json(const std::vector<TelemetrySample>& samples,
                             std::span<const double> window_end_s,
                             std::span<const double> window_tflops, std::size_t max_points) {
  const std::size_t windows = window_end_s.size();
  if (windows == 0 || window_tflops.size() != windows) return nullptr;
  const std::size_t points = std::max<std::size_t>(max_points, 1);
  const std::size_t per_point = (windows + points - 1) / points;
  Json t_s = Json::array();
  Json tflops = Json::array();
  Json sm_clock = Json::array();
  Json mem_clock = Json::array();
  Json power = Json::array();
  Json temperature = Json::array();
  Json throttle = Json::array();
  std::size_t next_sample = 0;
  for (std::size_t first = 0; first < windows; first += per_point) {
    const std::size_t last = std::min(first + per_point, windows) - 1;
    double inverse_sum = 0;
    bool rated = true;
    for (std::size_t w = first; w <= last; ++w) {
      rated = rated && window_tflops[w] > 0;
      if (rated) inverse_sum += 1 / window_tflops[w];
    }
    const double end = window_end_s[last];
    PointReadings readings;
    while (next_sample < samples.size() && samples[next_sample].time_s <= end)
      readings.add(samples[next_sample++]);
    t_s.push_back(end);
    tflops.push_back(rated ? Json(static_cast<double>(last - first + 1) / inverse_sum)
                           : Json(nullptr));
    sm_clock.push_back(median_or_null(readings.sm_clock_mhz));
    mem_clock.push_back(median_or_null(readings.mem_clock_mhz));
    power.push_back(median_or_null(readings.power_w));
    temperature.push_back(max_or_null(readings.temperature_c));
    throttle.push_back(readings.reasons);
  }
  return {{"windows_per_point", per_point},
          {"t_s", std::move(t_s)},
          {"tflops", std::move(tflops)},
          {"sm_clock_mhz", std::move(sm_clock)},
          {"mem_clock_mhz", std::move(mem_clock)},
          {"power_w", std::move(power)},
          {"temperature_c", std::move(temperature)},
          {"throttle", std::move(throttle)}};
}

}  // namespace commcert
