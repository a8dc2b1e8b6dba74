#include "core/collective_figures.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/stats.hpp"

namespace commcert {

Bandwidth bandwidth_of(std::uint64_t bytes, double seconds, double bus_factor) {
  Bandwidth b;
  if (seconds > 0) {
    b.algbw_bytes_per_second = static_cast<double>(bytes) / seconds;
    b.busbw_bytes_per_second = b.algbw_bytes_per_second * bus_factor;
  }
  return b;
}

RankSpread rank_spread(std::span<const double> rank_seconds) {
  if (rank_seconds.empty()) throw std::invalid_argument("no rank times to spread");
  const auto [low, high] = std::minmax_element(rank_seconds.begin(), rank_seconds.end());
  RankSpread s;
  s.min_seconds = *low;
  s.max_seconds = *high;
  s.median_seconds = median(rank_seconds);
  s.straggler_index = static_cast<std::size_t>(low - rank_seconds.begin());
  s.straggler_lead_seconds = s.median_seconds - *low;
  return s;
}

}  // namespace commcert
