#include "health/telemetry.hpp"

#include <algorithm>
#include <chrono>

#include "core/clock.hpp"
#include "core/stats.hpp"
#include "health/clock_event_reasons.hpp"

namespace commcert {
namespace {

template <typename T, typename Get>
std::vector<double> values_of(const std::vector<TelemetrySample>& samples, Get get) {
  std::vector<double> values;
  for (const auto& sample : samples) {
    const std::optional<T>& value = get(sample);
    if (value) values.push_back(static_cast<double>(*value));
  }
  return values;
}

Json min_median_max(const std::vector<double>& values) {
  if (values.empty()) return {{"min", nullptr}, {"median", nullptr}, {"max", nullptr}};
  return {{"min", *std::min_element(values.begin(), values.end())},
          {"median", median(values)},
          {"max", *std::max_element(values.begin(), values.end())}};
}

Json median_max(const std::vector<double>& values) {
  if (values.empty()) return {{"median", nullptr}, {"max", nullptr}};
  return {{"median", median(values)}, {"max", *std::max_element(values.begin(), values.end())}};
}

Json delta(const std::optional<std::uint64_t>& before, const std::optional<std::uint64_t>& after) {
  if (!before || !after) return nullptr;
  // Volatile counters only grow while the driver stays loaded; a reset in between shows as a
  // smaller value, reported as the count since the reset.
  return *after >= *before ? *after - *before : *after;
}

Json throttle_json(const std::vector<TelemetrySample>& samples) {
  std::vector<std::pair<std::string, double>> seconds;  // in order of first appearance
  for (std::size_t i = 1; i < samples.size(); ++i) {
    if (!samples[i].clock_event_reasons) continue;
    const double dt = samples[i].time_s - samples[i - 1].time_s;
    for (const auto& bit : clock_event_bits(*samples[i].clock_event_reasons)) {
      auto it = std::find_if(seconds.begin(), seconds.end(),
                             [&](const auto& entry) { return entry.first == bit.name; });
      if (it == seconds.end()) {
        seconds.emplace_back(bit.name, 0.0);
        it = std::prev(seconds.end());
      }
      it->second += dt;
    }
  }
  Json out = Json::array();
  for (const auto& [reason, time] : seconds)
    out.push_back({{"reason", reason}, {"seconds", time}});
  return out;
}

}  // namespace

Json telemetry_json(const TelemetrySeries& series) {
  const auto& s = series.samples;
  Json out;
  out["samples"] = s.size();
  out["interval_s"] = series.interval_s;
  out["sm_clock_mhz"] = min_median_max(values_of<unsigned>(
      s, [](const auto& x) -> const auto& { return x.sm_clock_mhz; }));
  out["mem_clock_mhz"] = min_median_max(values_of<unsigned>(
      s, [](const auto& x) -> const auto& { return x.mem_clock_mhz; }));
  out["power_w"] = median_max(values_of<double>(
      s, [](const auto& x) -> const auto& { return x.power_w; }));
  out["power_limit_w"] = series.power_limit_w ? Json(*series.power_limit_w) : Json(nullptr);
  out["temperature_c"] = median_max(values_of<unsigned>(
      s, [](const auto& x) -> const auto& { return x.temperature_c; }));
  out["throttle"] = throttle_json(s);
  out["ecc_delta"] = {
      {"corrected", delta(series.ecc_before.corrected, series.ecc_after.corrected)},
      {"uncorrected", delta(series.ecc_before.uncorrected, series.ecc_after.uncorrected)}};
  if (series.xid_events) {
    Json events = Json::array();
    for (const auto& event : *series.xid_events)
      events.push_back({{"xid", event.xid}, {"time", event.time}});
    out["xid_events"] = std::move(events);
  } else {
    out["xid_events"] = nullptr;
  }
  return out;
}

TelemetrySampler::TelemetrySampler(const NvmlLibrary& nvml, std::vector<nvml::Device> devices,
                                   double interval_s)
    : nvml_(nvml),
      devices_(std::move(devices)),
      interval_s_(interval_s > 0 ? interval_s : 0.1),
      series_(devices_.size()) {}

TelemetrySampler::~TelemetrySampler() {
  stop();
}

EccTotals TelemetrySampler::ecc_totals(nvml::Device device) const {
  EccTotals totals;
  totals.corrected =
      nvml_.ecc_errors(device, nvml::kMemoryErrorCorrected, nvml::kVolatileEcc).value;
  totals.uncorrected =
      nvml_.ecc_errors(device, nvml::kMemoryErrorUncorrected, nvml::kVolatileEcc).value;
  return totals;
}

void TelemetrySampler::start() {
  for (std::size_t slot = 0; slot < devices_.size(); ++slot) {
    auto& series = series_[slot];
    series.interval_s = interval_s_;
    if (const auto limit = nvml_.power_limit_mw(devices_[slot]); limit.ok()) {
      series.power_limit_w = *limit.value / 1000.0;
    }
    series.ecc_before = ecc_totals(devices_[slot]);
  }
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void TelemetrySampler::stop() {
  if (!thread_.joinable()) return;
  stopping_ = true;
  thread_.join();
  for (std::size_t slot = 0; slot < devices_.size(); ++slot) {
    series_[slot].ecc_after = ecc_totals(devices_[slot]);
  }
}

void TelemetrySampler::run() {
  // The event set lives on this thread: NVML event sets are not thread-safe.
  xids_ = std::make_unique<XidWatcher>(nvml_, devices_);
  const auto start = SteadyClock::now();
  const auto interval =
      std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(interval_s_));
  auto next = start;
  while (!stopping_) {
    const double now_s = seconds_between(start, SteadyClock::now());
    for (std::size_t slot = 0; slot < devices_.size(); ++slot) {
      const nvml::Device device = devices_[slot];
      TelemetrySample sample;
      sample.time_s = now_s;
      sample.sm_clock_mhz = nvml_.clock_mhz(device, nvml::kClockSm).value;
      sample.mem_clock_mhz = nvml_.clock_mhz(device, nvml::kClockMem).value;
      if (const auto power = nvml_.power_mw(device); power.ok())
        sample.power_w = *power.value / 1000.0;
      sample.temperature_c = nvml_.temperature_c(device).value;
      sample.clock_event_reasons = nvml_.clock_event_reasons(device).value;
      series_[slot].samples.push_back(sample);
    }
    next += interval;
    // Waiting for Xid events is the sleep between samples.
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(next - SteadyClock::now());
    xids_->poll(static_cast<unsigned>(std::max<long long>(0, wait.count())));
  }
  xids_->poll(0);
  for (std::size_t slot = 0; slot < devices_.size(); ++slot) {
    series_[slot].xid_events = xids_->events(slot);
  }
  xids_.reset();
}

TelemetrySeries TelemetrySampler::series(std::size_t slot) const {
  return series_.at(slot);
}

}  // namespace commcert
