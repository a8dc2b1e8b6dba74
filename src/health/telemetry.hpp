#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/json.hpp"
#include "health/nvml_library.hpp"
#include "health/xid_watcher.hpp"

namespace commcert {

// One reading of a GPU's sensors. A sensor NVML cannot read is nullopt in that sample.
struct TelemetrySample {
  double time_s = 0;  // since sampling started
  std::optional<unsigned> sm_clock_mhz;
  std::optional<unsigned> mem_clock_mhz;
  std::optional<double> power_w;
  std::optional<unsigned> temperature_c;
  std::optional<std::uint64_t> clock_event_reasons;
};

struct EccTotals {
  std::optional<std::uint64_t> corrected;
  std::optional<std::uint64_t> uncorrected;
};

// Everything a burn record's `telemetry` object is made of (docs/records.md, kind burn).
struct TelemetrySeries {
  double interval_s = 0.1;
  std::vector<TelemetrySample> samples;
  std::optional<double> power_limit_w;
  EccTotals ecc_before;
  EccTotals ecc_after;
  std::optional<std::vector<XidEvent>> xid_events;  // nullopt: Xid events could not be watched
};

// The `telemetry` object: min/median/max of each sensor over the samples that have it, and for
// each clock-event reason the time it was active (each sample's reasons are charged with the
// time since the previous sample).
[[nodiscard]] Json telemetry_json(const TelemetrySeries& series);

// Samples a set of GPUs on a thread of its own every `interval_s`, and watches their Xid events
// between samples, from start() to stop().
class TelemetrySampler {
 public:
  TelemetrySampler(const NvmlLibrary& nvml, std::vector<nvml::Device> devices, double interval_s);
  ~TelemetrySampler();
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  void start();
  void stop();
  // The series of devices[slot]; call after stop().
  [[nodiscard]] TelemetrySeries series(std::size_t slot) const;

 private:
  void run();
  [[nodiscard]] EccTotals ecc_totals(nvml::Device device) const;

  const NvmlLibrary& nvml_;
  std::vector<nvml::Device> devices_;
  double interval_s_;
  std::vector<TelemetrySeries> series_;
  std::unique_ptr<XidWatcher> xids_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace commcert
