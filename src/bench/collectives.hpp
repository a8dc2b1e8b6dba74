#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/collective_types.hpp"
#include "kernels/pattern.hpp"

namespace commcert {

// What the sweep engine needs to know about a collective; the backends know how to call it.
// Derived from the collective's row in kernels/collective_types.hpp, in the order `all` runs them.
struct CollectiveInfo {
  CollectiveKind kind;
  std::string_view name;             // stable id used on the command line and in records
  std::string_view nccl_tests_name;  // the nccl-tests binary measuring the same thing
  // Per-rank count for a requested size in bytes (rounded as nccl-tests rounds it).
  std::uint64_t (*count_for_bytes)(std::uint64_t bytes, int element_size, int nranks);
  // The nccl-tests "size" column (and algbw numerator) for a per-rank count.
  std::uint64_t (*bytes_for_count)(std::uint64_t count, int element_size, int nranks);
  // busbw = algbw * factor: the data each rank must move on its busiest link, normalised so the
  // number compares to hardware bandwidth (nccl-tests doc/PERFORMANCE.md).
  double (*bus_factor)(int nranks);
};

[[nodiscard]] std::span<const CollectiveInfo> all_collectives();
[[nodiscard]] const CollectiveInfo& collective_info(CollectiveKind kind);

// Every collective's name in table order, space-separated, for help and error text.
[[nodiscard]] std::string collective_names();

// Parses positional names ("allreduce", "all_gather", "all_reduce_perf", "all"); keeps the
// order given, drops repeats. Throws UsageError.
[[nodiscard]] std::vector<CollectiveKind> parse_collectives(std::span<const std::string> names);

}  // namespace commcert
