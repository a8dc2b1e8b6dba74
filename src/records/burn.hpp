#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/json.hpp"
#include "core/record.hpp"

namespace commcert {

// kind "burn" (docs/records.md, docs/gpu-stages.md): one definition of the record, filled by
// cli/burn_command.cpp (bench/burn.cpp computes the measurement) and matched field by field by
// the validator's reader (validate/detail/burn_parser.cpp). Every field name is spelled once, as
// the `k...` constant beside its member.

struct BurnMatrix {
  static constexpr const char* kM = "m";
  static constexpr const char* kN = "n";
  static constexpr const char* kK = "k";
  static constexpr const char* kDtype = "dtype";
  std::uint64_t m = 0;
  std::uint64_t n = 0;
  std::uint64_t k = 0;
  std::string dtype;
};

// The names inside `telemetry` that the validator reads; health/telemetry.cpp renders the
// object (`samples`, clocks, power, ...).
struct BurnTelemetryFields {
  static constexpr const char* kThrottle = "throttle";
  static constexpr const char* kThrottleReason = "reason";
  static constexpr const char* kThrottleSeconds = "seconds";
  static constexpr const char* kXidEvents = "xid_events";
};

// What a GPU that ran the burn measured.
struct BurnMeasurement {
  static constexpr const char* kMatrix = "matrix";
  static constexpr const char* kRequestedDurationS = "requested_duration_s";
  static constexpr const char* kDurationS = "duration_s";
  static constexpr const char* kIterations = "iterations";
  static constexpr const char* kTflops = "tflops";
  static constexpr const char* kTflopsWindows = "tflops_windows";
  static constexpr const char* kMiscompares = "miscompares";
  static constexpr const char* kPeerMismatch = "peer_mismatch";
  static constexpr const char* kPeerGpus = "peer_gpus";
  static constexpr const char* kTelemetry = "telemetry";
  static constexpr const char* kTimeline = "timeline";
  static constexpr const char* kCheckedResults = "checked_results";
  static constexpr const char* kWindowS = "window_s";
  static constexpr const char* kDatasheetPeakTflops = "datasheet_peak_tflops";
  std::optional<BurnMatrix> matrix;  // nullopt for power_fma
  double requested_duration_s = 0;
  double duration_s = 0;
  std::uint64_t iterations = 0;
  std::optional<double> tflops;   // median of the windows
  Json tflops_windows = nullptr;  // as bench/throughput.cpp summarises the windows
  std::uint64_t miscompares = 0;
  std::optional<bool> peer_mismatch;  // nullopt: no same-model peer to compare with
  int peer_gpus = 0;
  Json telemetry = nullptr;  // as health/telemetry.cpp renders it; null without NVML
  // As health/telemetry_timeline.cpp renders it; absent from records written before it existed.
  Json timeline = nullptr;
  std::uint64_t checked_results = 0;
  double window_s = 0;
  std::optional<double> datasheet_peak_tflops;
};

// One GPU's burn. A GPU on which nothing ran (skipped, failed in set-up, no GPU at all) has no
// measurement: the record names only the kernel.
struct BurnRecord : RecordHead {
  static constexpr const char* kKind = "burn";
  static constexpr const char* kKernel = "kernel";
  std::string kernel;
  std::optional<BurnMeasurement> measurement;
};

// The record as written: the common fields, `reason`, `kernel`, then the measurement's fields in
// schema order.
[[nodiscard]] Json to_json(const BurnRecord& record);

}  // namespace commcert
