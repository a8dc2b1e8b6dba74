#include "bench/throughput.hpp"

#include <algorithm>
#include <cmath>

#include "core/stats.hpp"

namespace commcert {

std::optional<double> bytes_per_second(double bytes, double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds) || bytes < 0) return std::nullopt;
  return bytes / seconds;
}

std::optional<double> median_bandwidth(std::span<const double> sample_seconds,
                                       double bytes_per_sample) {
  std::vector<double> rates;
  for (const double seconds : sample_seconds) {
    if (auto rate = bytes_per_second(bytes_per_sample, seconds)) rates.push_back(*rate);
  }
  if (rates.empty()) return std::nullopt;
  return median(rates);
}

std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || !(*b > 0)) return std::nullopt;
  return *a / *b;
}

std::optional<double> best_of(std::initializer_list<std::optional<double>> values) {
  std::optional<double> best;
  for (const auto& value : values) {
    if (value && (!best || *value > *best)) best = value;
  }
  return best;
}

std::optional<double> tflops(double flops, double seconds) {
  const auto rate = bytes_per_second(flops, seconds);
  if (!rate) return std::nullopt;
  return *rate / 1e12;
}

Json window_summary_json(std::span<const double> window_tflops) {
  if (window_tflops.empty()) return nullptr;
  std::vector<double> sorted(window_tflops.begin(), window_tflops.end());
  std::sort(sorted.begin(), sorted.end());
  return {{"count", sorted.size()},
          {"min", sorted.front()},
          {"p50", median(sorted)},
          {"max", sorted.back()}};
}

}  // namespace commcert
