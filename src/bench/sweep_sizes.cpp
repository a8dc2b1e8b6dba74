#include "bench/sweep_sizes.hpp"

#include <fmt/format.h>

#include "core/errors.hpp"

namespace commcert {

std::vector<std::uint64_t> sweep_sizes(const SweepOptions& options) {
  if (options.min_bytes > options.max_bytes) {
    throw UsageError(fmt::format("-b/--minbytes ({}) is larger than -e/--maxbytes ({})",
                                 options.min_bytes, options.max_bytes));
  }
  const bool multiplicative = options.step_factor > 1.0;
  if (multiplicative && options.min_bytes == 0) {
    throw UsageError("-b/--minbytes must be at least 1 with -f/--stepfactor");
  }
  if (!multiplicative && options.step_bytes == 0 && options.min_bytes != options.max_bytes) {
    throw UsageError("-i/--stepbytes must be at least 1 (or give -f/--stepfactor)");
  }
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = options.min_bytes; size <= options.max_bytes;) {
    sizes.push_back(size);
    if (sizes.size() > kMaxSweepSizes) {
      throw UsageError(fmt::format(
          "the sweep has more than {} sizes; use -f/--stepfactor or a larger -i/--stepbytes",
          kMaxSweepSizes));
    }
    const std::uint64_t next =
        multiplicative ? static_cast<std::uint64_t>(static_cast<double>(size) * options.step_factor)
                       : size + options.step_bytes;
    if (next <= size) {
      // A factor too small to grow this size would silently end the sweep early.
      if (multiplicative && size < options.max_bytes) {
        throw UsageError(fmt::format("-f/--stepfactor {} cannot grow {} bytes; use a larger factor",
                                     options.step_factor, size));
      }
      break;  // a step of zero (min == max), or past the largest size
    }
    size = next;
  }
  return sizes;
}

}  // namespace commcert
