#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/json.hpp"

namespace commcert {

// Bytes moved per second; nullopt for a non-positive time (no measurement, not infinity).
[[nodiscard]] std::optional<double> bytes_per_second(double bytes, double seconds);

// The median bandwidth of timed samples that each moved `bytes_per_sample`.
[[nodiscard]] std::optional<double> median_bandwidth(std::span<const double> sample_seconds,
                                                     double bytes_per_sample);

// a / b, nullopt when either is missing or b is not positive.
[[nodiscard]] std::optional<double> ratio(std::optional<double> a, std::optional<double> b);

// The larger of the values present.
[[nodiscard]] std::optional<double> best_of(std::initializer_list<std::optional<double>> values);

// TFLOP/s of `flops` done in `seconds`.
[[nodiscard]] std::optional<double> tflops(double flops, double seconds);

// {count, min, p50, max} over per-window TFLOP/s; null when there is no window.
[[nodiscard]] Json window_summary_json(std::span<const double> window_tflops);

}  // namespace commcert
