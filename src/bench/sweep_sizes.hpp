#pragma once

#include <cstdint>
#include <vector>

#include "bench/sweep_options.hpp"

namespace commcert {

// The requested sizes in bytes, from min to max by factor (when > 1) or by step, as nccl-tests
// walks them. Throws UsageError for an empty, inverted or unbounded range.
[[nodiscard]] std::vector<std::uint64_t> sweep_sizes(const SweepOptions& options);

inline constexpr std::size_t kMaxSweepSizes = 4096;

}  // namespace commcert
