#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "bench/measurement.hpp"

namespace commcert {

// Per-rank results travel to process 0 through the control plane's gather, which moves doubles
// (MPI_DOUBLE). The layout is fixed here and nowhere else, and every field arrives exactly:
// times are doubles already, flags are 0 or 1, and integers travel in 32-bit halves, each exact
// in a double's 53-bit significand, so a count of wrong elements above 2^53 reaches the record
// unrounded. Per rank, in order: global rank, mean seconds, has back-to-back (0/1), back-to-back
// seconds (0 when none), wrong elements (high half, low half), wrong iterations, checked (0/1).
inline constexpr std::size_t kRankResultWireFields = 8;

[[nodiscard]] std::vector<double> encode_rank_results(std::span<const RankMeasurement> results);

// Throws RuntimeFailure when `wire` is not a whole number of results or a field holds what
// encode_rank_results never writes (a process of another version, a truncated message).
[[nodiscard]] std::vector<RankMeasurement> decode_rank_results(std::span<const double> wire);

}  // namespace commcert
