#include "bench/collectives.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace commcert {
namespace {

using u64 = std::uint64_t;

// Collectives that split data by rank round the per-rank count down to 16 bytes, as nccl-tests
// does, so per-rank chunks stay aligned.
u64 split_count(u64 bytes, int element_size, int nranks) {
  const u64 per_rank = bytes / static_cast<u64>(element_size) / static_cast<u64>(nranks);
  const u64 align = 16 / static_cast<u64>(element_size);
  return per_rank & ~(align - 1);
}
u64 whole_count(u64 bytes, int element_size, int /*nranks*/) {
  return bytes / static_cast<u64>(element_size);
}
u64 whole_bytes(u64 count, int element_size, int /*nranks*/) {
  return count * static_cast<u64>(element_size);
}
u64 split_bytes(u64 count, int element_size, int nranks) {
  return count * static_cast<u64>(element_size) * static_cast<u64>(nranks);
}

double factor_one(int /*nranks*/) {
  return 1.0;
}
double factor_ring(int nranks) {
  return static_cast<double>(nranks - 1) / nranks;
}
double factor_allreduce(int nranks) {
  return 2.0 * (nranks - 1) / nranks;
}

// What the sweep needs, derived from each collective's row (kernels/collective_types.hpp): a
// collective with a block per rank on either side splits its bytes by rank.
constexpr CollectiveInfo info_from(const CollectiveTraits& row) {
  const bool split = row.input == Blocks::kPerRank || row.output == Blocks::kPerRank;
  double (*factor)(int) = factor_one;
  if (row.bus_factor == BusFactor::kRing) factor = factor_ring;
  if (row.bus_factor == BusFactor::kTwiceRing) factor = factor_allreduce;
  return {row.kind,
          row.name,
          row.nccl_tests_name,
          split ? split_count : whole_count,
          split ? split_bytes : whole_bytes,
          factor};
}

template <std::size_t... I>
constexpr std::array<CollectiveInfo, sizeof...(I)> make_collectives(std::index_sequence<I...>) {
  return {{info_from(kCollectiveTraits[I])...}};
}

constexpr auto kCollectives = make_collectives(std::make_index_sequence<kCollectiveKindCount>{});

std::string normalise(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c != '_' && c != '-')
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (out.ends_with("perf")) out.erase(out.size() - 4);
  return out;
}

}  // namespace

std::span<const CollectiveInfo> all_collectives() {
  return kCollectives;
}

const CollectiveInfo& collective_info(CollectiveKind kind) {
  return kCollectives[static_cast<std::size_t>(kind)];
}

std::string collective_names() {
  std::string names;
  for (const auto& info : kCollectives) {
    if (!names.empty()) names += ' ';
    names += info.name;
  }
  return names;
}

std::vector<CollectiveKind> parse_collectives(std::span<const std::string> names) {
  std::vector<CollectiveKind> kinds;
  const auto add = [&](CollectiveKind kind) {
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
  };
  for (const auto& name : names) {
    const std::string key = normalise(name);
    if (key == "all") {
      for (const auto& info : kCollectives)
        add(info.kind);
      continue;
    }
    const auto match = std::find_if(kCollectives.begin(), kCollectives.end(),
                                    [&](const CollectiveInfo& info) { return info.name == key; });
    if (match == kCollectives.end()) {
      throw UsageError(fmt::format("unknown collective '{}' ({} all)", name, collective_names()));
    }
    add(match->kind);
  }
  if (kinds.empty()) throw UsageError("no collective given (e.g. 'commcert sweep allreduce')");
  return kinds;
}

}  // namespace commcert
