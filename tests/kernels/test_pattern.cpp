// The data contract of collective checks (kernels/pattern.hpp), checked by simulating every
// collective on the host: each rank's input comes from input_bits(), the collective is carried
// out as NCCL or MPI would (reductions in many orders, rounding in the element type after every
// step), and every rank's output must be what expected_bits() says. If this holds, a correct
// backend can never be reported wrong, and the checks below show a broken one cannot pass.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/numeric_formats.hpp"
#include "kernels/pattern.hpp"

namespace commcert {
namespace {

constexpr CollectiveKind kAllKinds[] = {
    CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
    CollectiveKind::kBroadcast, CollectiveKind::kReduce,    CollectiveKind::kAllToAll,
    CollectiveKind::kSendRecv,  CollectiveKind::kGather,    CollectiveKind::kScatter};
constexpr DataType kAllTypes[] = {DataType::kInt8,   DataType::kUint8,    DataType::kInt32,
                                  DataType::kUint32, DataType::kInt64,    DataType::kUint64,
                                  DataType::kHalf,   DataType::kBfloat16, DataType::kFloat,
                                  DataType::kDouble, DataType::kFp8E4M3,  DataType::kFp8E5M2};
constexpr ReduceOp kAllOps[] = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMin, ReduceOp::kMax,
                                ReduceOp::kAvg};
constexpr int kRankCounts[] = {1, 2, 3, 4, 7, 8, 16};

const char* kind_name(CollectiveKind kind) {
  static const char* const kNames[] = {"allreduce", "allgather", "reducescatter",
                                       "broadcast", "reduce",    "alltoall",
                                       "sendrecv",  "gather",    "scatter"};
  return kNames[static_cast<int>(kind)];
}
const char* type_name(DataType type) {
  static const char* const kNames[] = {"int8", "uint8",    "int32", "uint32", "int64",  "uint64",
                                       "half", "bfloat16", "float", "double", "f8e4m3", "f8e5m2"};
  return kNames[static_cast<int>(type)];
}
const char* op_name(ReduceOp op) {
  static const char* const kNames[] = {"sum", "prod", "min", "max", "avg"};
  return kNames[static_cast<int>(op)];
}

std::string describe(const PatternSpec& s) {
  return std::string(kind_name(s.collective)) + " " + type_name(s.type) + " " + op_name(s.op) +
         " nranks=" + std::to_string(s.nranks) + " root=" + std::to_string(s.root) +
         " count=" + std::to_string(s.count);
}

std::vector<ReduceOp> ops_for(CollectiveKind kind) {
  if (is_reduction(kind)) return {std::begin(kAllOps), std::end(kAllOps)};
  return {ReduceOp::kSum};
}

std::vector<int> roots_for(CollectiveKind kind, int nranks) {
  if (!is_rooted(kind)) return {0};
  std::vector<int> roots = {0};
  if (nranks > 2) roots.push_back(1);
  if (nranks > 1) roots.push_back(nranks - 1);
  return roots;
}

std::vector<std::uint64_t> counts_for(int nranks) {
  // 0 (e.g. allgather of 8 B on 4 ranks), one element, and enough elements that every rank is
  // a contributor of some reduction element and every offset modulo nranks occurs.
  return {0, 1, 5, static_cast<std::uint64_t>(4 * nranks + 3)};
}

bool is_float_average(const PatternSpec& s) {
  return s.op == ReduceOp::kAvg && is_reduction(s.collective) && is_floating(s.type);
}

// --- The element arithmetic of a real reduction --------------------------------------------

// Rounds an exact result into the element type. NCCL computes fp8 arithmetic in half and
// converts the result (reduce_kernel.h), so fp8 rounds twice.
std::uint64_t round_in_type(double value, DataType type) {
  if (type == DataType::kFp8E4M3 || type == DataType::kFp8E5M2) {
    value = decode_value(encode_value(value, DataType::kHalf), DataType::kHalf);
  }
  return encode_value(value, type);
}

std::uint64_t combine(const PatternSpec& s, std::uint64_t a, std::uint64_t b) {
  const double x = decode_value(a, s.type);
  const double y = decode_value(b, s.type);
  switch (s.op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
      return round_in_type(x + y, s.type);
    case ReduceOp::kProd:
      return round_in_type(x * y, s.type);
    case ReduceOp::kMin:
      return round_in_type(std::min(x, y), s.type);
    case ReduceOp::kMax:
      return round_in_type(std::max(x, y), s.type);
  }
  return 0;
}

// The 1/nranks scalar NCCL multiplies by for a floating-point average (enqueue.cc
// hostToDevRedOp: float(1.0/nRanks) converted to the element type; double stays exact).
double average_scalar(const PatternSpec& s) {
  if (s.type == DataType::kDouble) return 1.0 / s.nranks;
  const double as_float = static_cast<float>(1.0 / s.nranks);
  return decode_value(encode_value(as_float, s.type), s.type);
}

enum class AverageModel {
  kSumThenDivide,  // exact sum, one rounding of the quotient
  kSumThenScale,   // sum, then multiply by the rounded 1/n (NCCL FuncSumPostDiv)
  kScaleThenSum,   // multiply every input by the rounded 1/n, then sum (NCCL FuncPreMulSum)
};

enum class Shape { kChain, kTree };

struct ReductionPlan {
  std::string name;
  std::function<std::vector<int>(int nranks, std::uint64_t element)> order;
  Shape shape = Shape::kChain;
  AverageModel average = AverageModel::kSumThenDivide;
  int lost_rank = -1;  // a rank whose contribution never arrives
};

// Reduces the values of the ranks in `plan.order`, rounding after every step.
std::uint64_t reduce_element(const PatternSpec& s, const std::vector<std::uint64_t>& by_rank,
                             std::uint64_t element, const ReductionPlan& plan) {
  std::vector<std::uint64_t> values;
  for (const int rank : plan.order(s.nranks, element)) {
    if (rank == plan.lost_rank) continue;
    std::uint64_t v = by_rank[static_cast<std::size_t>(rank)];
    if (is_float_average(s) && plan.average == AverageModel::kScaleThenSum) {
      v = round_in_type(decode_value(v, s.type) * average_scalar(s), s.type);
    }
    values.push_back(v);
  }
  if (values.empty()) return 0;
  if (plan.shape == Shape::kChain) {
    std::uint64_t acc = values[0];
    for (std::size_t i = 1; i < values.size(); ++i)
      acc = combine(s, acc, values[i]);
    values = {acc};
  } else {
    while (values.size() > 1) {  // pairwise rounds, as a tree or recursive halving does
      std::vector<std::uint64_t> next;
      for (std::size_t i = 0; i + 1 < values.size(); i += 2) {
        next.push_back(combine(s, values[i], values[i + 1]));
      }
      if (values.size() % 2) next.push_back(values.back());
      values = std::move(next);
    }
  }
  const std::uint64_t result = values[0];
  if (s.op != ReduceOp::kAvg) return result;
  if (!is_floating(s.type)) {
    // Integer average: the sum divided by nranks, rounded down (NCCL FuncSumPostDiv).
    const auto sum = static_cast<std::uint64_t>(decode_value(result, s.type));
    return encode_value(static_cast<double>(sum / static_cast<std::uint64_t>(s.nranks)), s.type);
  }
  switch (plan.average) {
    case AverageModel::kSumThenDivide:
      return round_in_type(decode_value(result, s.type) / s.nranks, s.type);
    case AverageModel::kSumThenScale:
      return round_in_type(decode_value(result, s.type) * average_scalar(s), s.type);
    case AverageModel::kScaleThenSum:
      return result;
  }
  return result;
}

std::vector<int> ascending(int nranks, std::uint64_t /*element*/) {
  std::vector<int> order(static_cast<std::size_t>(nranks));
  std::iota(order.begin(), order.end(), 0);
  return order;
}

std::vector<ReductionPlan> reduction_plans() {
  std::vector<ReductionPlan> plans;
  plans.push_back({"ascending", ascending});
  plans.push_back({"descending", [](int n, std::uint64_t e) {
                     auto order = ascending(n, e);
                     std::reverse(order.begin(), order.end());
                     return order;
                   }});
  plans.push_back({"ring from the element's rank", [](int n, std::uint64_t e) {
                     auto order = ascending(n, e);
                     std::rotate(order.begin(), order.begin() + static_cast<long>(e % n),
                                 order.end());
                     return order;
                   }});
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    plans.push_back({"random permutation " + std::to_string(seed), [seed](int n, std::uint64_t e) {
                       auto order = ascending(n, e);
                       std::mt19937_64 rng(seed * 1000003 + e);
                       std::shuffle(order.begin(), order.end(), rng);
                       return order;
                     }});
  }
  plans.push_back({"tree over a random permutation",
                   [](int n, std::uint64_t e) {
                     auto order = ascending(n, e);
                     std::mt19937_64 rng(77 + e);
                     std::shuffle(order.begin(), order.end(), rng);
                     return order;
                   },
                   Shape::kTree});
  // The average as NCCL computes it (1/n rounded into the type), in two orders.
  plans.push_back({"sum then scale", ascending, Shape::kChain, AverageModel::kSumThenScale});
  plans.push_back({"scale then sum", ascending, Shape::kChain, AverageModel::kScaleThenSum});
  plans.push_back({"scale then sum, tree", ascending, Shape::kTree, AverageModel::kScaleThenSum});
  return plans;
}

// --- Collectives on the host -------------------------------------------------------------

using Buffers = std::vector<std::vector<std::uint64_t>>;  // [rank][element] bit patterns

Buffers make_inputs(const PatternSpec& s) {
  Buffers inputs(static_cast<std::size_t>(s.nranks));
  for (int q = 0; q < s.nranks; ++q) {
    const RankLayout layout = rank_layout(s.collective, s.count, s.nranks, q, s.root);
    auto& in = inputs[static_cast<std::size_t>(q)];
    for (std::uint64_t i = 0; i < layout.input_elements; ++i)
      in.push_back(input_bits(s, q, i));
  }
  return inputs;
}

// What each rank's output holds after the collective, from the inputs alone.
Buffers run_collective(const PatternSpec& s, const Buffers& in, const ReductionPlan& plan) {
  const int n = s.nranks;
  const std::uint64_t c = s.count;
  const auto un = static_cast<std::uint64_t>(n);
  Buffers out(static_cast<std::size_t>(n));
  const auto reduce_at = [&](std::uint64_t input_index) {
    std::vector<std::uint64_t> by_rank;
    for (int q = 0; q < n; ++q)
      by_rank.push_back(in[static_cast<std::size_t>(q)][input_index]);
    return reduce_element(s, by_rank, input_index, plan);
  };
  const auto from = [&](int rank) -> const std::vector<std::uint64_t>& {
    return in[static_cast<std::size_t>(rank)];
  };
  std::vector<std::uint64_t> reduced;  // allreduce and reduce: the same result for every rank
  if (s.collective == CollectiveKind::kAllReduce || s.collective == CollectiveKind::kReduce) {
    for (std::uint64_t i = 0; i < c; ++i)
      reduced.push_back(reduce_at(i));
  }
  for (int r = 0; r < n; ++r) {
    auto& o = out[static_cast<std::size_t>(r)];
    const auto ur = static_cast<std::uint64_t>(r);
    switch (s.collective) {
      case CollectiveKind::kAllReduce:
        o = reduced;
        break;
      case CollectiveKind::kReduce:
        if (r == s.root) o = reduced;
        break;
      case CollectiveKind::kReduceScatter:
        for (std::uint64_t i = 0; i < c; ++i)
          o.push_back(reduce_at(ur * c + i));
        break;
      case CollectiveKind::kAllGather:
        for (int q = 0; q < n; ++q) {
          for (std::uint64_t i = 0; i < c; ++i)
            o.push_back(from(q)[i]);
        }
        break;
      case CollectiveKind::kGather:
        if (r == s.root) {
          for (int q = 0; q < n; ++q) {
            for (std::uint64_t i = 0; i < c; ++i)
              o.push_back(from(q)[i]);
          }
        }
        break;
      case CollectiveKind::kBroadcast:
        for (std::uint64_t i = 0; i < c; ++i)
          o.push_back(from(s.root)[i]);
        break;
      case CollectiveKind::kScatter:
        for (std::uint64_t i = 0; i < c; ++i)
          o.push_back(from(s.root)[ur * c + i]);
        break;
      case CollectiveKind::kAllToAll:
        for (int q = 0; q < n; ++q) {
          for (std::uint64_t i = 0; i < c; ++i)
            o.push_back(from(q)[ur * c + i]);
        }
        break;
      case CollectiveKind::kSendRecv:  // ring: send to r + 1, receive from r - 1
        for (std::uint64_t i = 0; i < c; ++i)
          o.push_back(from(static_cast<int>((ur + un - 1) % un))[i]);
        break;
    }
  }
  return out;
}

// Elements of `outputs` that fail the check, over every rank that has an output.
std::uint64_t count_wrong(const PatternSpec& s, const Buffers& outputs) {
  std::uint64_t wrong = 0;
  for (int r = 0; r < s.nranks; ++r) {
    const auto& o = outputs[static_cast<std::size_t>(r)];
    for (std::uint64_t i = 0; i < o.size(); ++i) {
      wrong += element_matches(s, o[i], expected_bits(s, r, i)) ? 0 : 1;
    }
  }
  return wrong;
}

// Calls `check` for every (op, nranks, root, count) of one collective and type.
void for_each_spec(CollectiveKind kind, DataType type,
                   const std::function<void(const PatternSpec&)>& check) {
  for (const ReduceOp op : ops_for(kind)) {
    for (const int n : kRankCounts) {
      for (const int root : roots_for(kind, n)) {
        for (const std::uint64_t count : counts_for(n)) {
          PatternSpec s;
          s.collective = kind;
          s.type = type;
          s.op = op;
          s.nranks = n;
          s.root = root;
          s.count = count;
          s.seed = 0x5eed0000u + static_cast<std::uint64_t>(n) * 131 + count;
          check(s);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

class PatternContract : public ::testing::TestWithParam<std::tuple<CollectiveKind, DataType>> {
 protected:
  CollectiveKind kind() const { return std::get<0>(GetParam()); }
  DataType type() const { return std::get<1>(GetParam()); }
};
// The same contract, for the checks that only concern reductions or only data movement.
class ReductionContract : public PatternContract {};
class MovementContract : public PatternContract {};

TEST_P(PatternContract, SimulatedCollectiveProducesTheExpectedOutput) {
  const auto plans =
      is_reduction(kind()) ? reduction_plans() : std::vector<ReductionPlan>{{"copy", ascending}};
  for_each_spec(kind(), type(), [&](const PatternSpec& s) {
    const Buffers inputs = make_inputs(s);
    for (const auto& plan : plans) {
      const Buffers outputs = run_collective(s, inputs, plan);
      for (int r = 0; r < s.nranks; ++r) {
        const RankLayout layout = rank_layout(s.collective, s.count, s.nranks, r, s.root);
        const auto& o = outputs[static_cast<std::size_t>(r)];
        ASSERT_EQ(o.size(), layout.has_output ? layout.output_elements : 0u)
            << describe(s) << " rank " << r;
        for (std::uint64_t i = 0; i < o.size(); ++i) {
          const std::uint64_t want = expected_bits(s, r, i);
          if (is_float_average(s)) {
            ASSERT_TRUE(element_matches(s, o[i], want))
                << describe(s) << " " << plan.name << " rank " << r << " element " << i << ": got "
                << decode_value(o[i], s.type) << " expected " << decode_value(want, s.type);
            if (plan.average == AverageModel::kSumThenDivide) {
              // The reference model rounds once, as expected_bits does: bit-exact.
              ASSERT_EQ(o[i], want) << describe(s) << " " << plan.name;
            }
          } else {
            ASSERT_EQ(o[i], want) << describe(s) << " " << plan.name << " rank " << r << " element "
                                  << i << ": got " << decode_value(o[i], s.type) << " expected "
                                  << decode_value(want, s.type);
          }
        }
      }
    }
  });
}

TEST_P(PatternContract, CorruptingAnyOutputElementIsDetected) {
  for_each_spec(kind(), type(), [&](const PatternSpec& s) {
    for (int r = 0; r < s.nranks; ++r) {
      const RankLayout layout = rank_layout(s.collective, s.count, s.nranks, r, s.root);
      if (!layout.has_output) continue;
      for (std::uint64_t i = 0; i < layout.output_elements; ++i) {
        const std::uint64_t want = expected_bits(s, r, i);
        ASSERT_FALSE(element_matches(s, corrupted_bits(want, s.type), want))
            << describe(s) << " rank " << r << " element " << i;
      }
    }
  });
}

TEST_P(ReductionContract, ALostContributionIsDetected) {
  // A rank whose data never reaches the reduction (a broken link, a skipped peer) must make
  // some output element wrong. Min and max only notice it where that rank holds the extreme
  // value, so the buffer is large: 32 input elements per rank.
  const ReductionPlan exact{"ascending", ascending};
  for (const ReduceOp op : kAllOps) {
    for (const int n : kRankCounts) {
      if (n == 1) continue;  // nothing to lose: the rank's own input is the result
      PatternSpec s;
      s.collective = kind();
      s.type = type();
      s.op = op;
      s.nranks = n;
      s.root = n - 1;
      s.count = kind() == CollectiveKind::kReduceScatter ? 32 : 32 * static_cast<std::uint64_t>(n);
      s.seed = 99;
      const Buffers inputs = make_inputs(s);
      ASSERT_EQ(count_wrong(s, run_collective(s, inputs, exact)), 0u) << describe(s);
      for (int lost = 0; lost < n; ++lost) {
        ReductionPlan plan = exact;
        plan.lost_rank = lost;
        EXPECT_GT(count_wrong(s, run_collective(s, inputs, plan)), 0u)
            << describe(s) << ": the contribution of rank " << lost << " is never missed";
      }
    }
  }
}

TEST_P(ReductionContract, EverySumAndProductContributionDecidesItsElement) {
  // Stronger, per element: for sum and prod, every contributor holding a non-identity value
  // changes that element's result, so one lost or zeroed contribution is caught where it is.
  const ReductionPlan exact{"ascending", ascending};
  for_each_spec(kind(), type(), [&](const PatternSpec& s) {
    if (s.op != ReduceOp::kSum && s.op != ReduceOp::kProd) return;
    const double identity = s.op == ReduceOp::kProd ? 1.0 : 0.0;
    const Buffers inputs = make_inputs(s);
    for (std::uint64_t e = 0; e < inputs[0].size(); ++e) {
      std::vector<std::uint64_t> by_rank;
      for (const auto& in : inputs)
        by_rank.push_back(in[e]);
      const std::uint64_t whole = reduce_element(s, by_rank, e, exact);
      for (int q = 0; q < s.nranks; ++q) {
        if (decode_value(by_rank[static_cast<std::size_t>(q)], s.type) == identity) continue;
        auto changed = by_rank;
        changed[static_cast<std::size_t>(q)] = encode_value(identity, s.type);
        const std::uint64_t without = reduce_element(s, changed, e, exact);
        ASSERT_FALSE(element_matches(s, without, whole))
            << describe(s) << " element " << e << ": rank " << q << " makes no difference";
      }
    }
  });
}

TEST_P(MovementContract, MisroutedDataIsDetected) {
  const ReductionPlan copy{"copy", ascending};
  for_each_spec(kind(), type(), [&](const PatternSpec& s) {
    // With one rank there is nowhere else for data to come from; four random elements never
    // repeat by chance, even one byte wide.
    if (s.nranks < 2 || s.count < 4) return;
    const Buffers inputs = make_inputs(s);
    const Buffers outputs = run_collective(s, inputs, copy);
    ASSERT_EQ(count_wrong(s, outputs), 0u) << describe(s);
    const auto n = static_cast<std::uint64_t>(s.nranks);
    for (int r = 0; r < s.nranks; ++r) {
      const auto ur = static_cast<std::uint64_t>(r);
      const auto& o = outputs[ur];
      if (o.empty()) continue;
      Buffers wrong = outputs;
      auto& w = wrong[ur];
      if (o.size() >= 2 * s.count) {
        // Two source blocks delivered to each other's place.
        for (std::uint64_t i = 0; i < s.count; ++i)
          std::swap(w[i], w[s.count + i]);
      } else if (s.collective == CollectiveKind::kBroadcast) {
        const auto other = static_cast<std::size_t>((static_cast<std::uint64_t>(s.root) + 1) % n);
        for (std::uint64_t i = 0; i < s.count; ++i)
          w[i] = inputs[other][i];
      } else if (s.collective == CollectiveKind::kScatter) {
        const auto& root_input = inputs[static_cast<std::size_t>(s.root)];
        for (std::uint64_t i = 0; i < s.count; ++i)
          w[i] = root_input[((ur + 1) % n) * s.count + i];
      } else if (s.collective == CollectiveKind::kSendRecv) {
        for (std::uint64_t i = 0; i < s.count; ++i)
          w[i] = inputs[ur][i];  // its own data back
      } else {
        FAIL() << describe(s) << ": no misrouting modelled";
      }
      EXPECT_GT(count_wrong(s, wrong), 0u) << describe(s) << " rank " << r;
    }
  });
}

TEST_P(MovementContract, InPlaceInputIsAlreadyWhereTheOutputExpectsIt) {
  // NCCL's in-place forms: allgather/gather send from recvbuff + rank*count, scatter receives
  // into sendbuff + rank*count. A rank's own block never moves, so expected_bits must agree
  // with input_bits there, or in-place runs would fail on correct hardware.
  for_each_spec(kind(), type(), [&](const PatternSpec& s) {
    for (int r = 0; r < s.nranks; ++r) {
      const RankLayout layout = rank_layout(s.collective, s.count, s.nranks, r, s.root);
      if (!layout.has_output) continue;
      const bool own_block_stays = s.collective == CollectiveKind::kAllGather ||
                                   s.collective == CollectiveKind::kGather ||
                                   (s.collective == CollectiveKind::kScatter && r == s.root);
      if (!own_block_stays) continue;
      for (std::uint64_t i = 0; i < s.count; ++i) {
        if (s.collective == CollectiveKind::kScatter) {
          ASSERT_EQ(expected_bits(s, r, i), input_bits(s, r, layout.in_place_output_offset + i))
              << describe(s);
        } else {
          ASSERT_EQ(expected_bits(s, r, layout.in_place_input_offset + i), input_bits(s, r, i))
              << describe(s);
        }
      }
    }
  });
}

std::string param_name(const ::testing::TestParamInfo<std::tuple<CollectiveKind, DataType>>& p) {
  return std::string(kind_name(std::get<0>(p.param))) + "_" + type_name(std::get<1>(p.param));
}

constexpr CollectiveKind kReductions[] = {CollectiveKind::kAllReduce, CollectiveKind::kReduce,
                                          CollectiveKind::kReduceScatter};
constexpr CollectiveKind kMovements[] = {CollectiveKind::kAllGather, CollectiveKind::kBroadcast,
                                         CollectiveKind::kAllToAll,  CollectiveKind::kSendRecv,
                                         CollectiveKind::kGather,    CollectiveKind::kScatter};

INSTANTIATE_TEST_SUITE_P(AllCollectivesAndTypes, PatternContract,
                         ::testing::Combine(::testing::ValuesIn(kAllKinds),
                                            ::testing::ValuesIn(kAllTypes)),
                         param_name);
INSTANTIATE_TEST_SUITE_P(ReductionsAndTypes, ReductionContract,
                         ::testing::Combine(::testing::ValuesIn(kReductions),
                                            ::testing::ValuesIn(kAllTypes)),
                         param_name);
INSTANTIATE_TEST_SUITE_P(MovementsAndTypes, MovementContract,
                         ::testing::Combine(::testing::ValuesIn(kMovements),
                                            ::testing::ValuesIn(kAllTypes)),
                         param_name);

// --- Layout ---------------------------------------------------------------------------------

TEST(RankLayout, PerCollectiveSizesAndInPlaceOffsets) {
  const std::uint64_t c = 10;
  const int n = 4;
  for (int r = 0; r < n; ++r) {
    const auto at = static_cast<std::uint64_t>(r) * c;
    const struct {
      CollectiveKind kind;
      std::uint64_t input, output, in_place_input, in_place_output;
      bool has_output;
    } expected[] = {
        {CollectiveKind::kAllReduce, c, c, 0, 0, true},
        {CollectiveKind::kBroadcast, c, c, 0, 0, true},
        {CollectiveKind::kSendRecv, c, c, 0, 0, true},
        {CollectiveKind::kReduce, c, c, 0, 0, r == 2},
        {CollectiveKind::kAllGather, c, n * c, at, 0, true},
        {CollectiveKind::kGather, c, n * c, at, 0, r == 2},
        {CollectiveKind::kReduceScatter, n * c, c, 0, at, true},
        {CollectiveKind::kScatter, n * c, c, 0, at, true},
        {CollectiveKind::kAllToAll, n * c, n * c, 0, 0, true},
    };
    for (const auto& e : expected) {
      const RankLayout layout = rank_layout(e.kind, c, n, r, /*root=*/2);
      EXPECT_EQ(layout.input_elements, e.input) << kind_name(e.kind) << " rank " << r;
      EXPECT_EQ(layout.output_elements, e.output) << kind_name(e.kind) << " rank " << r;
      EXPECT_EQ(layout.in_place_input_offset, e.in_place_input) << kind_name(e.kind);
      EXPECT_EQ(layout.in_place_output_offset, e.in_place_output) << kind_name(e.kind);
      EXPECT_EQ(layout.has_output, e.has_output) << kind_name(e.kind) << " rank " << r;
      // In place, one buffer holds both regions: the larger extent of the two.
      EXPECT_EQ(layout.in_place_buffer_elements(),
                std::max(e.in_place_input + e.input, e.in_place_output + e.output))
          << kind_name(e.kind);
    }
  }
}

TEST(RankLayout, SplitCollectivesNeedNTimesCountInPlace) {
  for (const CollectiveKind kind :
       {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter, CollectiveKind::kGather,
        CollectiveKind::kScatter, CollectiveKind::kAllToAll}) {
    for (int r = 0; r < 8; ++r) {
      EXPECT_EQ(rank_layout(kind, 16, 8, r, 0).in_place_buffer_elements(), 128u)
          << kind_name(kind) << " rank " << r;
    }
  }
}

// --- The element check --------------------------------------------------------------------

TEST(ElementMatches, ExactForEverythingButFloatingAverages) {
  PatternSpec s;
  s.collective = CollectiveKind::kAllReduce;
  for (const DataType type : kAllTypes) {
    s.type = type;
    for (const ReduceOp op : kAllOps) {
      s.op = op;
      const std::uint64_t one = encode_value(1.0, type);
      EXPECT_TRUE(element_matches(s, one, one));
      EXPECT_FALSE(element_matches(s, one, one ^ 4)) << type_name(type);
      if (element_size(type) < 8) {
        // Bits above the element width are not part of the element.
        EXPECT_TRUE(element_matches(s, one | (std::uint64_t{1} << 63), one)) << type_name(type);
      }
    }
  }
}

TEST(ElementMatches, FloatingAverageWithinTwoUlp) {
  static_assert(kAverageUlpTolerance == 2);
  for (const DataType type : {DataType::kHalf, DataType::kBfloat16, DataType::kFloat,
                              DataType::kDouble, DataType::kFp8E4M3, DataType::kFp8E5M2}) {
    for (const CollectiveKind kind :
         {CollectiveKind::kAllReduce, CollectiveKind::kReduce, CollectiveKind::kReduceScatter}) {
      PatternSpec s;
      s.collective = kind;
      s.type = type;
      s.op = ReduceOp::kAvg;
      const std::uint64_t want = encode_value(1.5, type);
      EXPECT_TRUE(element_matches(s, want + 1, want)) << type_name(type);
      EXPECT_TRUE(element_matches(s, want - 2, want)) << type_name(type);
      EXPECT_TRUE(element_matches(s, want + 2, want)) << type_name(type);
      EXPECT_FALSE(element_matches(s, want + 3, want)) << type_name(type);
      EXPECT_FALSE(element_matches(s, want - 3, want)) << type_name(type);
      // Across zero: +smallest and -smallest subnormal are 2 ulp apart, the next one 3.
      const std::uint64_t sign = std::uint64_t{1} << (8 * element_size(type) - 1);
      EXPECT_TRUE(element_matches(s, 1, sign | 1)) << type_name(type);
      EXPECT_FALSE(element_matches(s, 2, sign | 1)) << type_name(type);
      // The sign is not a small difference.
      EXPECT_FALSE(element_matches(s, want | sign, want)) << type_name(type);
    }
    // Data movement and other reductions stay exact, even with op avg.
    PatternSpec copy;
    copy.collective = CollectiveKind::kBroadcast;
    copy.type = type;
    copy.op = ReduceOp::kAvg;
    const std::uint64_t want = encode_value(1.5, type);
    EXPECT_FALSE(element_matches(copy, want + 1, want)) << type_name(type);
    PatternSpec sum = copy;
    sum.collective = CollectiveKind::kAllReduce;
    sum.op = ReduceOp::kSum;
    EXPECT_FALSE(element_matches(sum, want + 1, want)) << type_name(type);
  }
  // Integer averages are exact.
  PatternSpec ints;
  ints.type = DataType::kInt32;
  ints.op = ReduceOp::kAvg;
  EXPECT_FALSE(element_matches(ints, 6, 5));
}

TEST(CorruptedBits, FlipsTheHighestNonSignBitOnly) {
  for (const DataType type : kAllTypes) {
    const int bits = 8 * element_size(type);
    for (const std::uint64_t value : {std::uint64_t{0}, std::uint64_t{0x5555555555555555},
                                      encode_value(1.0, type), width_mask(type)}) {
      const std::uint64_t v = value & width_mask(type);
      const std::uint64_t flipped = corrupted_bits(v, type);
      EXPECT_EQ(v ^ flipped, std::uint64_t{1} << (bits - 2)) << type_name(type);
      EXPECT_EQ(flipped & ~width_mask(type), 0u) << type_name(type);
    }
  }
}

// --- Inputs --------------------------------------------------------------------------------

TEST(Inputs, DataMovementCarriesFullWidthPatternsThatDifferPerRankAndElement) {
  PatternSpec s;
  s.collective = CollectiveKind::kAllGather;
  s.type = DataType::kDouble;
  s.nranks = 8;
  s.count = 1000;
  s.seed = 42;
  std::vector<std::uint64_t> seen;
  std::uint64_t ones = 0;
  for (int r = 0; r < s.nranks; ++r) {
    for (std::uint64_t i = 0; i < s.count; ++i) {
      const std::uint64_t bits = input_bits(s, r, i);
      seen.push_back(bits);
      ones += static_cast<std::uint64_t>(std::popcount(bits));
    }
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end()) << "repeated input elements";
  // Every bit position is exercised: about half the bits are set.
  EXPECT_NEAR(static_cast<double>(ones) / (64.0 * static_cast<double>(seen.size())), 0.5, 0.01);
  // A different seed (another size or placement) gives different data.
  PatternSpec other = s;
  other.seed = 43;
  EXPECT_NE(input_bits(s, 0, 0), input_bits(other, 0, 0));
}

TEST(Inputs, ReductionInputsAreSmallExactValuesOrIdentities) {
  for (const DataType type : kAllTypes) {
    for (const ReduceOp op : kAllOps) {
      PatternSpec s;
      s.collective = CollectiveKind::kAllReduce;
      s.type = type;
      s.op = op;
      s.nranks = 8;
      s.count = 64;
      s.seed = 7;
      for (int r = 0; r < s.nranks; ++r) {
        for (std::uint64_t i = 0; i < s.count; ++i) {
          const double v = decode_value(input_bits(s, r, i), type);
          EXPECT_EQ(v, std::floor(v)) << type_name(type) << " " << op_name(op);
          EXPECT_GE(v, op == ReduceOp::kProd ? 1.0 : 0.0) << type_name(type) << " " << op_name(op);
          EXPECT_LE(v, 128.0) << type_name(type) << " " << op_name(op);
        }
      }
    }
  }
}

}  // namespace
}  // namespace commcert
