#include "validate/finding.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace commcert {

double round_figure(double value) {
  if (value == 0) return 0;
  const double digits = 4 - std::ceil(std::log10(std::abs(value)));
  const double scale = std::pow(10.0, digits);
  return std::round(value * scale) / scale;
}

std::string format_figure(double value) {
  const double magnitude = std::abs(value);
  // Unit scaling leaves 480 as 480.00000000000006: print what the number means.
  if (magnitude < 1e15 && std::abs(value - std::round(value)) <= 1e-9 * std::max(1.0, magnitude)) {
    return fmt::format("{:.0f}", std::round(value));
  }
  if (magnitude >= 1000) return fmt::format("{:.0f}", value);
  if (magnitude >= 100) return fmt::format("{:.1f}", value);
  if (magnitude >= 1) return fmt::format("{:.2f}", value);
  return fmt::format("{:.3g}", value);
}

std::string gpu_where(const Evidence& evidence, const GpuKey& gpu) {
  if (gpu.index < 0) return {};
  if (gpu.uuid == kNoString) return fmt::format("gpu {}: ", gpu.index);
  return fmt::format("gpu {} ({}): ", gpu.index, evidence.text(gpu.uuid));
}

}  // namespace commcert
