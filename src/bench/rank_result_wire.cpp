#include "bench/rank_result_wire.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace commcert {
namespace {

constexpr double kHalfRange = 4294967296.0;  // 2^32

// `value` as the whole number in [0, max] it must hold, or a RuntimeFailure naming the field.
std::uint64_t whole_number(double value, double max, const char* field) {
  if (!(value >= 0 && value <= max) || std::floor(value) != value) {
    throw RuntimeFailure(
        fmt::format("per-rank result from another process: {} is {}, not a whole number in [0, {}]",
                    field, value, max));
  }
  return static_cast<std::uint64_t>(value);
}

}  // namespace

std::vector<double> encode_rank_results(std::span<const RankMeasurement> results) {
  std::vector<double> wire;
  wire.reserve(results.size() * kRankResultWireFields);
  for (const auto& result : results) {
    wire.insert(wire.end(),
                {static_cast<double>(result.rank), result.mean_seconds,
                 result.back_to_back_seconds ? 1.0 : 0.0, result.back_to_back_seconds.value_or(0.0),
                 static_cast<double>(result.wrong_elements >> 32),
                 static_cast<double>(result.wrong_elements & 0xffffffffULL),
                 static_cast<double>(result.wrong_iterations), result.checked ? 1.0 : 0.0});
  }
  return wire;
}

std::vector<RankMeasurement> decode_rank_results(std::span<const double> wire) {
  if (wire.size() % kRankResultWireFields != 0) {
    throw RuntimeFailure(
        fmt::format("per-rank results from another process: {} values, not a multiple of {}",
                    wire.size(), kRankResultWireFields));
  }
  constexpr double kIntMax = std::numeric_limits<int>::max();
  std::vector<RankMeasurement> out;
  for (std::size_t at = 0; at < wire.size(); at += kRankResultWireFields) {
    const auto fields = wire.subspan(at, kRankResultWireFields);
    RankMeasurement result;
    result.rank = static_cast<int>(whole_number(fields[0], kIntMax, "rank"));
    result.mean_seconds = fields[1];
    if (whole_number(fields[2], 1, "back-to-back flag") == 1) {
      result.back_to_back_seconds = fields[3];
    }
    result.wrong_elements = whole_number(fields[4], kHalfRange - 1, "wrong elements (high)") << 32 |
                            whole_number(fields[5], kHalfRange - 1, "wrong elements (low)");
    result.wrong_iterations =
        static_cast<int>(whole_number(fields[6], kIntMax, "wrong iterations"));
    result.checked = whole_number(fields[7], 1, "checked flag") == 1;
    out.push_back(result);
  }
  return out;
}

}  // namespace commcert
