#include "validate/fleet_stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/stats.hpp"

namespace commcert {

RobustStats robust_stats(std::span<const double> values) {
  if (values.empty()) throw std::invalid_argument("robust statistics of an empty sample");
  RobustStats stats;
  stats.count = values.size();
  stats.median = median(values);
  std::vector<double> deviations(values.size());
  std::transform(values.begin(), values.end(), deviations.begin(),
                 [&](double x) { return std::abs(x - stats.median); });
  stats.mad = median(deviations);
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  stats.min = *low;
  stats.max = *high;
  return stats;
}

std::optional<double> robust_z(double value, const RobustStats& stats) {
  if (stats.mad <= 0) return std::nullopt;
  return 0.6745 * (value - stats.median) / stats.mad;
}

double shortfall_pct(double value, double reference, bool higher_is_better) {
  if (reference == 0) return 0;
  const double delta = higher_is_better ? reference - value : value - reference;
  return 100.0 * delta / std::abs(reference);
}

}  // namespace commcert
