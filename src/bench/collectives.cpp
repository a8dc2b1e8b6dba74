#include "bench/collectives.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

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

constexpr std::array<CollectiveInfo, kCollectiveKindCount> kCollectives = {{
    {CollectiveKind::kAllReduce, "allreduce", "all_reduce_perf", whole_count, whole_bytes,
     factor_allreduce},
    {CollectiveKind::kAllGather, "allgather", "all_gather_perf", split_count, split_bytes,
     factor_ring},
    {CollectiveKind::kReduceScatter, "reducescatter", "reduce_scatter_perf", split_count,
     split_bytes, factor_ring},
    {CollectiveKind::kBroadcast, "broadcast", "broadcast_perf", whole_count, whole_bytes,
     factor_one},
    {CollectiveKind::kReduce, "reduce", "reduce_perf", whole_count, whole_bytes, factor_one},
    {CollectiveKind::kAllToAll, "alltoall", "alltoall_perf", split_count, split_bytes, factor_ring},
    {CollectiveKind::kSendRecv, "sendrecv", "sendrecv_perf", whole_count, whole_bytes, factor_one},
    {CollectiveKind::kGather, "gather", "gather_perf", split_count, split_bytes, factor_ring},
    {CollectiveKind::kScatter, "scatter", "scatter_perf", split_count, split_bytes, factor_ring},
}};

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
      throw UsageError(fmt::format(
          "unknown collective '{}' (allreduce allgather reducescatter broadcast reduce alltoall "
          "sendrecv gather scatter all)",
          name));
    }
    add(match->kind);
  }
  if (kinds.empty()) throw UsageError("no collective given (e.g. 'commcert sweep allreduce')");
  return kinds;
}

}  // namespace commcert
