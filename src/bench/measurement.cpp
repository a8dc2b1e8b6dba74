#include "bench/measurement.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "bench/collectives.hpp"

namespace commcert {

double combine_rank_times(const std::vector<RankMeasurement>& ranks, RankAggregation aggregation) {
  if (ranks.empty()) throw std::invalid_argument("no rank times to combine");
  const auto by_time = [](const RankMeasurement& a, const RankMeasurement& b) {
    return a.mean_seconds < b.mean_seconds;
  };
  switch (aggregation) {
    case RankAggregation::kRankZero:
      return ranks.front().mean_seconds;
    case RankAggregation::kMin:
      return std::min_element(ranks.begin(), ranks.end(), by_time)->mean_seconds;
    case RankAggregation::kMax:
      return std::max_element(ranks.begin(), ranks.end(), by_time)->mean_seconds;
    case RankAggregation::kMean:
      break;
  }
  const double total =
      std::accumulate(ranks.begin(), ranks.end(), 0.0,
                      [](double sum, const RankMeasurement& r) { return sum + r.mean_seconds; });
  return total / static_cast<double>(ranks.size());
}

MeasurementFigures derive_figures(const Measurement& m, RankAggregation aggregation) {
  MeasurementFigures f;
  if (m.ranks.empty() || m.iteration_seconds.empty()) {
    throw std::invalid_argument("measurement without samples");
  }
  f.time_seconds = combine_rank_times(m.ranks, aggregation);
  if (f.time_seconds > 0) {
    f.algbw_bytes_per_second = static_cast<double>(m.bytes) / f.time_seconds;
    f.busbw_bytes_per_second =
        f.algbw_bytes_per_second * collective_info(m.collective).bus_factor(m.nranks);
  }
  std::vector<double> times;
  for (const auto& rank : m.ranks)
    times.push_back(rank.mean_seconds);
  const auto [low, high] = std::minmax_element(times.begin(), times.end());
  f.rank_min_seconds = *low;
  f.rank_max_seconds = *high;
  f.rank_median_seconds = median(times);
  f.straggler_rank = m.ranks[static_cast<std::size_t>(low - times.begin())].rank;
  f.straggler_lead_seconds = f.rank_median_seconds - *low;
  f.iterations = summarize(m.iteration_seconds);
  const bool any_checked = std::any_of(m.ranks.begin(), m.ranks.end(),
                                       [](const RankMeasurement& r) { return r.checked; });
  if (any_checked) {
    std::uint64_t wrong = 0;
    for (const auto& rank : m.ranks) {
      wrong += rank.wrong_elements;
      if (rank.wrong_elements > 0) f.wrong_ranks.push_back(rank.rank);
    }
    f.wrong_elements = wrong;
  }
  return f;
}

}  // namespace commcert
