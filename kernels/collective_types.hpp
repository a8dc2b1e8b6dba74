#pragma once

#include <cstdint>
#include <string_view>

#include "kernels/host_device.hpp"

namespace commcert {

// Wire-level element types. The order is part of nothing external: names are the contract.
enum class DataType : std::uint8_t {
  kInt8,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kHalf,
  kBfloat16,
  kFloat,
  kDouble,
  kFp8E4M3,
  kFp8E5M2,
};
inline constexpr int kDataTypeCount = 12;

enum class ReduceOp : std::uint8_t { kSum, kProd, kMin, kMax, kAvg };
inline constexpr int kReduceOpCount = 5;

enum class CollectiveKind : std::uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv,
  kGather,
  kScatter,
};
inline constexpr int kCollectiveKindCount = 9;

COMMCERT_HD constexpr int element_size(DataType type) {
  switch (type) {
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
      return 1;
    case DataType::kHalf:
    case DataType::kBfloat16:
      return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat:
      return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kDouble:
      return 8;
  }
  return 1;
}

COMMCERT_HD constexpr bool is_floating(DataType type) {
  switch (type) {
    case DataType::kHalf:
    case DataType::kBfloat16:
    case DataType::kFloat:
    case DataType::kDouble:
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
      return true;
    default:
      return false;
  }
}

// One row per collective: everything host code, device code and the validator need to know
// about a kind, so adding a collective is this row plus one call per backend (docs/extending.md).
// The backends' per-kind call tables are checked against kCollectiveKindCount at compile time.

// How many count-sized blocks a buffer holds: one, or one per rank (gathered or scattered data).
enum class Blocks : std::uint8_t { kOne, kPerRank };

// Where the value of an output element comes from.
enum class Source : std::uint8_t {
  kReduced,       // the reduction over every rank's input at the same position
  kBlockOwner,    // the input of the rank that owns the output block (gathers, alltoall)
  kRoot,          // the root's input (broadcast, scatter)
  kPreviousRank,  // the input of rank - 1 (sendrecv's ring)
};

// busbw = algbw * factor (nccl-tests doc/PERFORMANCE.md): 1, (n-1)/n or 2(n-1)/n.
enum class BusFactor : std::uint8_t { kOne, kRing, kTwiceRing };

struct CollectiveTraits {
  CollectiveKind kind;
  std::string_view name;             // stable id on the command line, in records and the schema
  std::string_view check_id;         // the validator's check ("collective." + name)
  std::string_view nccl_tests_name;  // the nccl-tests binary measuring the same thing
  Blocks input;                      // per rank, before the operation
  Blocks output;                     // per rank, after it
  Source source;
  bool rooted;            // a root's role skews who waits: no straggler evidence from it
  bool output_root_only;  // only the root receives (reduce, gather)
  BusFactor bus_factor;
  // Position among the collective checks in verdicts. Verdicts have listed alltoall before the
  // rooted collectives since before this table existed; the column keeps them byte-identical.
  std::uint8_t verdict_order;
};

// In enum order, which is also the order `all` runs them and the schema lists them.
inline constexpr CollectiveTraits kCollectiveTraits[] = {
    {CollectiveKind::kAllReduce, "allreduce", "collective.allreduce", "all_reduce_perf",
     Blocks::kOne, Blocks::kOne, Source::kReduced, false, false, BusFactor::kTwiceRing, 0},
    {CollectiveKind::kAllGather, "allgather", "collective.allgather", "all_gather_perf",
     Blocks::kOne, Blocks::kPerRank, Source::kBlockOwner, false, false, BusFactor::kRing, 1},
    {CollectiveKind::kReduceScatter, "reducescatter", "collective.reducescatter",
     "reduce_scatter_perf", Blocks::kPerRank, Blocks::kOne, Source::kReduced, false, false,
     BusFactor::kRing, 2},
    {CollectiveKind::kBroadcast, "broadcast", "collective.broadcast", "broadcast_perf",
     Blocks::kOne, Blocks::kOne, Source::kRoot, true, false, BusFactor::kOne, 4},
    {CollectiveKind::kReduce, "reduce", "collective.reduce", "reduce_perf", Blocks::kOne,
     Blocks::kOne, Source::kReduced, true, true, BusFactor::kOne, 5},
    {CollectiveKind::kAllToAll, "alltoall", "collective.alltoall", "alltoall_perf",
     Blocks::kPerRank, Blocks::kPerRank, Source::kBlockOwner, false, false, BusFactor::kRing, 3},
    {CollectiveKind::kSendRecv, "sendrecv", "collective.sendrecv", "sendrecv_perf", Blocks::kOne,
     Blocks::kOne, Source::kPreviousRank, false, false, BusFactor::kOne, 6},
    {CollectiveKind::kGather, "gather", "collective.gather", "gather_perf", Blocks::kOne,
     Blocks::kPerRank, Source::kBlockOwner, true, true, BusFactor::kRing, 7},
    {CollectiveKind::kScatter, "scatter", "collective.scatter", "scatter_perf", Blocks::kPerRank,
     Blocks::kOne, Source::kRoot, true, false, BusFactor::kRing, 8},
};

namespace detail {

constexpr bool collective_rows_consistent() {
  bool seen[kCollectiveKindCount] = {};
  for (int i = 0; i < kCollectiveKindCount; ++i) {
    const CollectiveTraits& row = kCollectiveTraits[i];
    if (static_cast<int>(row.kind) != i) return false;  // collective_traits() indexes by kind
    if (row.check_id.substr(0, 11) != "collective." || row.check_id.substr(11) != row.name)
      return false;
    if (row.verdict_order >= kCollectiveKindCount || seen[row.verdict_order]) return false;
    seen[row.verdict_order] = true;
  }
  return true;
}

// Device code may read a constexpr scalar but not index a host constexpr array at run time
// (CUDA C++ Programming Guide, "constexpr variables"), so each column the kernels need is packed
// at compile time into one integer, four bits per kind.
template <typename T>
constexpr std::uint64_t pack_column(T CollectiveTraits::*column) {
  std::uint64_t packed = 0;
  for (int i = 0; i < kCollectiveKindCount; ++i) {
    packed |= static_cast<std::uint64_t>(kCollectiveTraits[i].*column) << (4 * i);
  }
  return packed;
}

inline constexpr std::uint64_t kInputColumn = pack_column(&CollectiveTraits::input);
inline constexpr std::uint64_t kOutputColumn = pack_column(&CollectiveTraits::output);
inline constexpr std::uint64_t kSourceColumn = pack_column(&CollectiveTraits::source);
inline constexpr std::uint64_t kRootedColumn = pack_column(&CollectiveTraits::rooted);
inline constexpr std::uint64_t kRootOnlyColumn = pack_column(&CollectiveTraits::output_root_only);

template <typename T>
COMMCERT_HD constexpr T unpack_column(std::uint64_t packed, CollectiveKind kind) {
  return static_cast<T>((packed >> (4 * static_cast<unsigned>(kind))) & 0xFu);
}

}  // namespace detail

static_assert(sizeof(kCollectiveTraits) / sizeof(kCollectiveTraits[0]) == kCollectiveKindCount,
              "every collective kind needs a row in kCollectiveTraits");
static_assert(detail::collective_rows_consistent(),
              "kCollectiveTraits rows must be in enum order with collective.<name> check ids and "
              "distinct verdict_order positions");
static_assert(kCollectiveKindCount <= 16, "the packed columns hold four bits for each of 16 kinds");

// Host-side access to the whole row.
constexpr const CollectiveTraits& collective_traits(CollectiveKind kind) {
  return kCollectiveTraits[static_cast<int>(kind)];
}

// The row whose name is `name` exactly (the record's spelling), or null.
constexpr const CollectiveTraits* find_collective_traits(std::string_view name) {
  for (const CollectiveTraits& row : kCollectiveTraits) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

// The columns host and device code share, read from the packed copies.
COMMCERT_HD constexpr Blocks input_blocks(CollectiveKind kind) {
  return detail::unpack_column<Blocks>(detail::kInputColumn, kind);
}
COMMCERT_HD constexpr Blocks output_blocks(CollectiveKind kind) {
  return detail::unpack_column<Blocks>(detail::kOutputColumn, kind);
}
COMMCERT_HD constexpr Source output_source(CollectiveKind kind) {
  return detail::unpack_column<Source>(detail::kSourceColumn, kind);
}
COMMCERT_HD constexpr bool is_reduction(CollectiveKind kind) {
  return output_source(kind) == Source::kReduced;
}
COMMCERT_HD constexpr bool is_rooted(CollectiveKind kind) {
  return detail::unpack_column<bool>(detail::kRootedColumn, kind);
}
COMMCERT_HD constexpr bool output_at_root_only(CollectiveKind kind) {
  return detail::unpack_column<bool>(detail::kRootOnlyColumn, kind);
}

}  // namespace commcert
