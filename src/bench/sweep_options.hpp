#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "bench/groups.hpp"
#include "kernels/collective_types.hpp"

namespace commcert {

// How per-rank times combine into the one time bandwidth is computed from (nccl-tests -a).
enum class RankAggregation { kRankZero = 0, kMean = 1, kMin = 2, kMax = 3 };

// Everything `commcert sweep` was asked to do, parsed once and passed down (no globals).
struct SweepOptions {
  std::vector<CollectiveKind> collectives;
  std::vector<DataType> types{DataType::kFloat};
  std::vector<ReduceOp> ops{ReduceOp::kSum};
  int root = 0;  // -1: every rank in turn
  std::uint64_t min_bytes = 32ULL << 20;
  std::uint64_t max_bytes = 32ULL << 20;
  std::uint64_t step_bytes = 1ULL << 20;
  double step_factor = 1.0;  // > 1: multiplicative steps, else additive steps of step_bytes
  int iterations = 20;
  int warmup_iterations = 1;
  bool check = true;
  int blocking = 0;
  RankAggregation aggregation = RankAggregation::kMean;
  int cycles = 1;  // 0: until interrupted
  double timeout_seconds = 300;
  int graph_launches = 0;
  // Adaptive iterations: keep measuring a size until the 95 % CI half-width of its mean is
  // within target_ci_percent of the mean, or size_budget_seconds of operation time is spent,
  // or max_iterations is reached. The first batch is `iterations` long.
  std::optional<double> target_ci_percent;
  double size_budget_seconds = 5.0;
  int max_iterations = 10000;
  std::uint64_t seed = 0x636f6d6d63657274ULL;  // "commcert"
  Scope scope = Scope::kCluster;
  PairRanks pair_ranks = PairRanks::kOne;
  // Pairs scope: these node pairs instead of every pair (a localization re-test).
  std::vector<NodePair> pair_list;
  // Groups scope: these disjoint node groups at once, recorded as round `node_groups.round`.
  NodeGroups node_groups;
};

}  // namespace commcert
