#pragma once

// The data contract of a collective check: what every rank puts in its input and what every
// rank must find in its output, as pure functions of (seed, rank, index). The same functions run
// on the host (MPI backend, unit tests) and inside the fill/verify kernels (NCCL backend).
//
// Reductions are exact for every type and any reduction order: each input element has only K
// contributing ranks (the others hold the operation's identity), and contributions are small
// integers (sum, min, max, avg) or powers of two (prod) chosen so every partial result is
// exactly representable. Only the average's final division can round; it is compared within
// 2 ulp. Data-movement collectives carry full-width pseudo-random bit patterns.

#include <cstdint>

#include "kernels/collective_types.hpp"
#include "kernels/numeric_formats.hpp"

namespace commcert {

struct PatternSpec {
  CollectiveKind collective = CollectiveKind::kAllReduce;
  DataType type = DataType::kFloat;
  ReduceOp op = ReduceOp::kSum;
  int nranks = 1;
  int root = 0;
  std::uint64_t count = 0;  // per-rank count, the nccl-tests "count" column
  std::uint64_t seed = 0;
};

inline constexpr std::uint64_t kAverageUlpTolerance = 2;

// Where one rank's input and output live, in elements. Out of place, the input is the send
// buffer and the output the receive buffer; in place, both live in the receive buffer at the
// offsets below (the NCCL and nccl-tests convention; backends adjust where MPI_IN_PLACE differs).
struct RankLayout {
  std::uint64_t input_elements = 0;
  std::uint64_t output_elements = 0;
  std::uint64_t in_place_input_offset = 0;
  std::uint64_t in_place_output_offset = 0;
  bool has_output = true;  // false for non-root ranks of reduce and gather

  COMMCERT_HD std::uint64_t in_place_buffer_elements() const {
    const std::uint64_t input_end = in_place_input_offset + input_elements;
    const std::uint64_t output_end = in_place_output_offset + output_elements;
    return input_end > output_end ? input_end : output_end;
  }
};

// Read from the collective's row: a buffer of one block holds `count` elements, one of a block
// per rank `count * nranks`. In place, a rank's single block sits at its own position in the
// per-rank side (its share of a gather, its result of a reduce-scatter or scatter).
COMMCERT_HD inline RankLayout rank_layout(CollectiveKind kind, std::uint64_t count, int nranks,
                                          int rank, int root) {
  const std::uint64_t all = count * static_cast<std::uint64_t>(nranks);
  const std::uint64_t mine = count * static_cast<std::uint64_t>(rank);
  const bool input_split = input_blocks(kind) == Blocks::kPerRank;
  const bool output_split = output_blocks(kind) == Blocks::kPerRank;
  return {input_split ? all : count, output_split ? all : count,
          output_split && !input_split ? mine : 0, input_split && !output_split ? mine : 0,
          !output_at_root_only(kind) || rank == root};
}

COMMCERT_HD inline std::uint64_t mix64(std::uint64_t x) {
  // splitmix64 finaliser: cheap and well mixed, so neighbouring elements differ in every bit.
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

COMMCERT_HD inline std::uint64_t element_hash(std::uint64_t seed, int rank, std::uint64_t index) {
  return mix64(seed ^ (static_cast<std::uint64_t>(rank) << 40) ^ index);
}

// Largest integer n such that every integer in [0, n] is exact in `type` (capped for integers,
// where wrap-around rather than precision is the limit).
COMMCERT_HD constexpr std::uint64_t exact_integer_limit(DataType type) {
  switch (type) {
    case DataType::kInt8:
      return 127;
    case DataType::kUint8:
      return 255;
    case DataType::kHalf:
      return 2048;
    case DataType::kBfloat16:
      return 256;
    case DataType::kFp8E4M3:
      return 16;
    case DataType::kFp8E5M2:
      return 8;
    default:
      return 1u << 20;
  }
}

// Largest e such that 2^e is exact and below the type's maximum.
COMMCERT_HD constexpr int power_of_two_limit(DataType type) {
  switch (type) {
    case DataType::kInt8:
      return 6;
    case DataType::kUint8:
      return 7;
    case DataType::kHalf:
      return 15;
    case DataType::kFp8E4M3:
      return 8;
    case DataType::kFp8E5M2:
      return 15;
    default:
      return 30;
  }
}

// Number of ranks contributing a non-identity value to each input element.
COMMCERT_HD inline int contributor_count(const PatternSpec& s) {
  int limit = 4;
  if (s.op == ReduceOp::kAvg) limit = 2;  // keeps pre-multiplied averages within 2 ulp
  if (s.op == ReduceOp::kProd)
    limit = power_of_two_limit(s.type) < 8 ? power_of_two_limit(s.type) : 8;
  return s.nranks < limit ? s.nranks : limit;
}

// Contributions lie in [1, max_contribution]; sums of K of them stay exact.
COMMCERT_HD inline std::uint64_t max_contribution(const PatternSpec& s) {
  const std::uint64_t limit = exact_integer_limit(s.type);
  if (s.op == ReduceOp::kMin || s.op == ReduceOp::kMax) return limit - 1 < 100 ? limit - 1 : 100;
  const std::uint64_t share = limit / static_cast<std::uint64_t>(contributor_count(s));
  if (share < 1) return 1;
  return share < 100 ? share : 100;
}

COMMCERT_HD inline bool is_contributor(const PatternSpec& s, int rank, std::uint64_t index) {
  const auto n = static_cast<std::uint64_t>(s.nranks);
  const std::uint64_t offset = (static_cast<std::uint64_t>(rank) + n - index % n) % n;
  return offset < static_cast<std::uint64_t>(contributor_count(s));
}

// A contributing rank's value at input `index`: a small integer in [1, top] (sum, min, max,
// avg) or 1 or 2 (prod). `top` is max_contribution(s), hoisted out of per-element loops.
COMMCERT_HD inline double contribution(const PatternSpec& s, std::uint64_t top, int rank,
                                       std::uint64_t index) {
  const std::uint64_t h = element_hash(s.seed, rank, index);
  if (s.op == ReduceOp::kProd) return (h & 1) ? 2.0 : 1.0;
  // Lemire's multiply-shift maps the hash onto [0, top) without a division.
  return static_cast<double>(1 + (((h >> 32) * top) >> 32));
}

// Value (as a double, exact) that `rank` contributes at input `index` of a reduction.
COMMCERT_HD inline double reduction_input(const PatternSpec& s, int rank, std::uint64_t index) {
  const std::uint64_t top = max_contribution(s);
  if (!is_contributor(s, rank, index)) {
    switch (s.op) {
      case ReduceOp::kProd:
        return 1.0;
      case ReduceOp::kMin:
        return static_cast<double>(top + 1);
      default:
        return 0.0;  // identity of sum, avg and (with contributions >= 1) max
    }
  }
  return contribution(s, top, rank, index);
}

// Exact reduced value of input `index` over all ranks, before an average's division. Only the
// contributors (ranks index, index+1, ... mod n) matter: the others hold the identity, or for
// min/max a value that never wins.
COMMCERT_HD inline double reduction_result(const PatternSpec& s, std::uint64_t index) {
  const int k = contributor_count(s);
  const std::uint64_t top = max_contribution(s);
  const auto n = static_cast<std::uint64_t>(s.nranks);
  std::uint64_t rank = index % n;
  double acc = contribution(s, top, static_cast<int>(rank), index);
  for (int t = 1; t < k; ++t) {
    rank = rank + 1 == n ? 0 : rank + 1;
    const double v = contribution(s, top, static_cast<int>(rank), index);
    if (s.op == ReduceOp::kProd) {
      acc *= v;
    } else if (s.op == ReduceOp::kMin) {
      acc = v < acc ? v : acc;
    } else if (s.op == ReduceOp::kMax) {
      acc = v > acc ? v : acc;
    } else {
      acc += v;
    }
  }
  return acc;
}

COMMCERT_HD inline std::uint64_t reduced_bits(const PatternSpec& s, std::uint64_t index) {
  double value = reduction_result(s, index);
  if (s.op == ReduceOp::kAvg) {
    // Integer types average by integer division, as ncclAvg does.
    value = is_floating(s.type) ? value / s.nranks
                                // NOLINTNEXTLINE(bugprone-integer-division)
                                : static_cast<double>(static_cast<std::uint64_t>(value) /
                                                      static_cast<std::uint64_t>(s.nranks));
  }
  return encode_value(value, s.type);
}

// Bits `rank` holds at `index` of its input region.
COMMCERT_HD inline std::uint64_t input_bits(const PatternSpec& s, int rank, std::uint64_t index) {
  if (is_reduction(s.collective)) return encode_value(reduction_input(s, rank, index), s.type);
  return element_hash(s.seed, rank, index) & width_mask(s.type);
}

// Bits `rank` must hold at `index` of its output region after the collective.
COMMCERT_HD inline std::uint64_t expected_bits(const PatternSpec& s, int rank,
                                               std::uint64_t index) {
  const std::uint64_t c = s.count;
  const auto n = static_cast<std::uint64_t>(s.nranks);
  const auto r = static_cast<std::uint64_t>(rank);
  // Output element `index` comes from position `at` of some rank's input (or of the reduction):
  // within a block when the output has one per rank, offset to this rank's block when the input
  // has one per rank.
  const std::uint64_t within = output_blocks(s.collective) == Blocks::kPerRank ? index % c : index;
  const std::uint64_t at = (input_blocks(s.collective) == Blocks::kPerRank ? r * c : 0) + within;
  switch (output_source(s.collective)) {
    case Source::kReduced:
      return reduced_bits(s, at);
    case Source::kBlockOwner:
      return input_bits(s, static_cast<int>(index / c), at);
    case Source::kRoot:
      return input_bits(s, s.root, at);
    case Source::kPreviousRank:
      return input_bits(s, static_cast<int>((r + n - 1) % n), at);
  }
  return 0;
}

COMMCERT_HD inline bool element_matches(const PatternSpec& s, std::uint64_t got,
                                        std::uint64_t expected) {
  got &= width_mask(s.type);
  expected &= width_mask(s.type);
  if (got == expected) return true;
  return s.op == ReduceOp::kAvg && is_reduction(s.collective) && is_floating(s.type) &&
         ulp_distance(got, expected, s.type) <= kAverageUlpTolerance;
}

// Raw element access by width, for buffers whose element type is only known at run time.
COMMCERT_HD inline std::uint64_t load_element(const void* base, std::uint64_t index, int bytes) {
  const auto* p =
      static_cast<const unsigned char*>(base) + index * static_cast<std::uint64_t>(bytes);
  switch (bytes) {
    case 1:
      return *p;
    case 2:
      return *reinterpret_cast<const std::uint16_t*>(p);
    case 4:
      return *reinterpret_cast<const std::uint32_t*>(p);
    default:
      return *reinterpret_cast<const std::uint64_t*>(p);
  }
}

COMMCERT_HD inline void store_element(void* base, std::uint64_t index, int bytes,
                                      std::uint64_t bits) {
  auto* p = static_cast<unsigned char*>(base) + index * static_cast<std::uint64_t>(bytes);
  switch (bytes) {
    case 1:
      *p = static_cast<unsigned char>(bits);
      break;
    case 2:
      *reinterpret_cast<std::uint16_t*>(p) = static_cast<std::uint16_t>(bits);
      break;
    case 4:
      *reinterpret_cast<std::uint32_t*>(p) = static_cast<std::uint32_t>(bits);
      break;
    default:
      *reinterpret_cast<std::uint64_t*>(p) = bits;
      break;
  }
}

// The value a fault-injected rank writes over a correct element: one flipped bit, so the fault
// looks like real corruption and is never masked by tolerance (the low bit of an average within
// 2 ulp could be, so the flipped bit is the element's highest non-sign bit).
COMMCERT_HD inline std::uint64_t corrupted_bits(std::uint64_t bits, DataType type) {
  return bits ^ (std::uint64_t{1} << (8 * element_size(type) - 2));
}

// A fault-injected rank corrupts the first output element and then every 1021st.
inline constexpr std::uint64_t kCorruptionStride = 1021;

}  // namespace commcert
