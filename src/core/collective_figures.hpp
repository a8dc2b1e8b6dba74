#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace commcert {

// The figures every output of a collective measurement shows (the record, the nccl-tests table,
// later reports), defined once here, below both the stages that measure and the reporters that
// show, so no output derives its own.

// nccl-tests' bandwidths (doc/PERFORMANCE.md): algbw = bytes / time; busbw = algbw * the
// collective's bus factor. Both 0 when the time is not positive.
struct Bandwidth {
  double algbw_bytes_per_second = 0;
  double busbw_bytes_per_second = 0;
};
[[nodiscard]] Bandwidth bandwidth_of(std::uint64_t bytes, double seconds, double bus_factor);

// How the ranks' times spread. The rank with the least time inside the operation is the one the
// others waited for (the straggler): it arrived last.
struct RankSpread {
  double min_seconds = 0;
  double median_seconds = 0;
  double max_seconds = 0;
  std::size_t straggler_index = 0;    // position of the least time in the input
  double straggler_lead_seconds = 0;  // median minus the least time
};
// Throws std::invalid_argument on no times.
[[nodiscard]] RankSpread rank_spread(std::span<const double> rank_seconds);

}  // namespace commcert
