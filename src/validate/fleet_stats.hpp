#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace commcert {

// Median and median absolute deviation: a few broken nodes cannot move them, unlike a mean and
// standard deviation, so a fleet can judge its own members.
struct RobustStats {
  std::size_t count = 0;
  double median = 0;
  double mad = 0;  // median of |x - median|
  double min = 0;
  double max = 0;
};

// Throws std::invalid_argument on an empty sample.
[[nodiscard]] RobustStats robust_stats(std::span<const double> values);

// Iglewicz and Hoaglin's modified z-score, 0.6745 (x - median) / MAD: about a standard score
// for normal data. nullopt when MAD is 0 (more than half the values are equal).
[[nodiscard]] std::optional<double> robust_z(double value, const RobustStats& stats);

// How far `value` is on the bad side of `reference`, in % of it (negative: the good side).
[[nodiscard]] double shortfall_pct(double value, double reference, bool higher_is_better);

}  // namespace commcert
