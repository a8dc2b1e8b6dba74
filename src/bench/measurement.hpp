#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/sweep_options.hpp"
#include "core/stats.hpp"
#include "kernels/collective_types.hpp"

namespace commcert {

struct RankMeasurement {
  int rank = 0;
  double mean_seconds = 0;  // mean time this rank spent inside the operation (its windows)
  // Per operation, from the start of the first timed operation to the end of the last, when
  // every batch ran its operations back to back (RankLoopResult::back_to_back_seconds): what
  // nccl-tests times. nullopt when the harness ran work between operations.
  std::optional<double> back_to_back_seconds;
  std::uint64_t wrong_elements = 0;
  int wrong_iterations = 0;
  bool checked = false;
};

struct AdaptiveOutcome {
  double target_ci_percent = 0;
  std::optional<double> achieved_ci_percent;
  std::string stopped_by;  // "ci", "budget" or "max_iterations"
};

// One collective at one size and placement, as measured by every rank of one group.
struct Measurement {
  CollectiveKind collective = CollectiveKind::kAllReduce;
  DataType type = DataType::kFloat;
  std::optional<ReduceOp> op;  // reductions only
  std::optional<int> root;     // rooted collectives only
  std::uint64_t bytes = 0;     // nccl-tests "size" column
  std::uint64_t count = 0;     // nccl-tests "count" column (per rank)
  int nranks = 1;
  bool in_place = false;
  int cycle = 0;
  std::string scope = "cluster";
  int round = 0;                           // pairs: the circle-method round
  bool pair_list = false;                  // pairs: named by --pair-list (a re-test)
  int group = 0;                           // index of the group within its round
  std::vector<std::string> group_nodes;    // node identities of the group
  std::optional<std::string> unsupported;  // set when the backend cannot run this placement
  int warmup_iterations = 0;
  std::vector<double> iteration_seconds;  // per timed iteration: the slowest rank's time
  std::vector<RankMeasurement> ranks;     // in group-rank order; .rank is the global rank
  bool check_requested = false;
  std::optional<AdaptiveOutcome> adaptive;
};

// Where `time_s` and the bandwidths come from (docs/measurement.md, "What is timed").
enum class TimingMethod {
  kBackToBack,  // the span of the operations run back to back, divided by their number
  kWindows,     // the mean of each operation's own window
};
[[nodiscard]] std::string_view name_of(TimingMethod method);

// What a measurement says, derived once for the table and the record alike.
struct MeasurementFigures {
  double time_seconds = 0;  // per operation, combined across ranks by the aggregation
  TimingMethod timing = TimingMethod::kWindows;
  double algbw_bytes_per_second = 0;
  double busbw_bytes_per_second = 0;
  double rank_min_seconds = 0;
  double rank_median_seconds = 0;
  double rank_max_seconds = 0;
  // The rank that spent least time inside the operation: the one the others waited for.
  int straggler_rank = 0;             // global rank
  std::size_t straggler_index = 0;    // its position in Measurement::ranks
  double straggler_lead_seconds = 0;  // median rank time minus the straggler's
  SampleSummary iterations;
  std::optional<std::uint64_t> wrong_elements;  // nullopt when nothing was checked
  std::vector<int> wrong_ranks;                 // global ranks
};

// The entry of `m.ranks` for global rank `rank` (throws std::out_of_range if absent).
[[nodiscard]] const RankMeasurement& rank_entry(const Measurement& m, int rank);

// Combines the ranks' mean windows as -a says.
[[nodiscard]] double combine_rank_times(const std::vector<RankMeasurement>& ranks,
                                        RankAggregation aggregation);
// The same over per-rank times given in group-rank order.
[[nodiscard]] double combine_rank_seconds(const std::vector<double>& times,
                                          RankAggregation aggregation);

[[nodiscard]] MeasurementFigures derive_figures(const Measurement& measurement,
                                                RankAggregation aggregation);

}  // namespace commcert
