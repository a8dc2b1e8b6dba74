#include "bench/measurement.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "bench/collectives.hpp"
#include "core/collective_figures.hpp"

namespace commcert {

std::string_view name_of(TimingMethod method) {
  return method == TimingMethod::kBackToBack ? "back_to_back" : "windows";
}

double combine_rank_seconds(const std::vector<double>& times, RankAggregation aggregation) {
  if (times.empty()) throw std::invalid_argument("no rank times to combine");
  switch (aggregation) {
    case RankAggregation::kRankZero:
      return times.front();
    case RankAggregation::kMin:
      return *std::min_element(times.begin(), times.end());
    case RankAggregation::kMax:
      return *std::max_element(times.begin(), times.end());
    case RankAggregation::kMean:
      break;
  }
  return std::accumulate(times.begin(), times.end(), 0.0) / static_cast<double>(times.size());
}

double combine_rank_times(const std::vector<RankMeasurement>& ranks, RankAggregation aggregation) {
  std::vector<double> times;
  times.reserve(ranks.size());
  for (const auto& rank : ranks)
    times.push_back(rank.mean_seconds);
  return combine_rank_seconds(times, aggregation);
}

const RankMeasurement& rank_entry(const Measurement& m, int rank) {
  const auto found = std::find_if(m.ranks.begin(), m.ranks.end(),
                                  [rank](const RankMeasurement& r) { return r.rank == rank; });
  if (found == m.ranks.end()) throw std::out_of_range("rank not in measurement");
  return *found;
}

MeasurementFigures derive_figures(const Measurement& m, RankAggregation aggregation) {
  MeasurementFigures f;
  if (m.ranks.empty() || m.iteration_seconds.empty()) {
    throw std::invalid_argument("measurement without samples");
  }
  // nccl-tests' figure when every rank has it: the operations back to back, as nccl-tests runs
  // them. Otherwise each operation's own window, which leaves out the gaps between operations.
  const bool back_to_back = std::all_of(m.ranks.begin(), m.ranks.end(), [](const auto& rank) {
    return rank.back_to_back_seconds.has_value();
  });
  if (back_to_back) {
    std::vector<double> spans;
    for (const auto& rank : m.ranks)
      spans.push_back(*rank.back_to_back_seconds);
    f.time_seconds = combine_rank_seconds(spans, aggregation);
    f.timing = TimingMethod::kBackToBack;
  } else {
    f.time_seconds = combine_rank_times(m.ranks, aggregation);
    f.timing = TimingMethod::kWindows;
  }
  const Bandwidth bandwidth =
      bandwidth_of(m.bytes, f.time_seconds, collective_info(m.collective).bus_factor(m.nranks));
  f.algbw_bytes_per_second = bandwidth.algbw_bytes_per_second;
  f.busbw_bytes_per_second = bandwidth.busbw_bytes_per_second;
  std::vector<double> times;
  for (const auto& rank : m.ranks)
    times.push_back(rank.mean_seconds);
  const RankSpread spread = rank_spread(times);
  f.rank_min_seconds = spread.min_seconds;
  f.rank_max_seconds = spread.max_seconds;
  f.rank_median_seconds = spread.median_seconds;
  f.straggler_index = spread.straggler_index;
  f.straggler_rank = m.ranks[f.straggler_index].rank;
  f.straggler_lead_seconds = spread.straggler_lead_seconds;
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
