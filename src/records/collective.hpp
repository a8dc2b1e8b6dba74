#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/record.hpp"

namespace commcert {

// kind "collective" (docs/records.md): one definition of the record, filled by the sweep's
// writer (bench/collective_record.cpp) and matched field by field by the validator's reader
// (validate/detail/collective_parser.cpp). Every field name is spelled once, as the `k...`
// constant beside its member.

struct RankTimeSpread {
  static constexpr const char* kMinS = "min_s";
  static constexpr const char* kMedianS = "median_s";
  static constexpr const char* kMaxS = "max_s";
  double min_s = 0;
  double median_s = 0;
  double max_s = 0;
};

// The rank the others waited for.
struct CollectiveStraggler {
  static constexpr const char* kRank = "rank";
  static constexpr const char* kHost = "host";
  static constexpr const char* kTimeS = "time_s";
  static constexpr const char* kLeadS = "lead_s";
  int rank = 0;
  std::string host;
  double time_s = 0;
  double lead_s = 0;
};

struct IterationTimes {
  static constexpr const char* kCount = "count";
  static constexpr const char* kMinS = "min_s";
  static constexpr const char* kP50S = "p50_s";
  static constexpr const char* kP99S = "p99_s";
  static constexpr const char* kMaxS = "max_s";
  static constexpr const char* kMeanS = "mean_s";
  static constexpr const char* kCv = "cv";
  static constexpr const char* kSamplesS = "samples_s";
  // At most this many samples are written; beyond it, every k-th (evenly over the run).
  static constexpr std::size_t kMaxSamples = 1000;
  std::size_t count = 0;
  double min_s = 0;
  double p50_s = 0;
  double p99_s = 0;
  double max_s = 0;
  double mean_s = 0;
  double cv = 0;
  std::vector<double> samples_s;  // each timed iteration's slowest rank, in order
};

struct WrongRankEntry {
  static constexpr const char* kRank = "rank";
  static constexpr const char* kHost = "host";
  static constexpr const char* kWrongElements = "wrong_elements";
  static constexpr const char* kWrongIterations = "wrong_iterations";
  int rank = 0;
  std::string host;
  std::uint64_t wrong_elements = 0;
  int wrong_iterations = 0;
};

struct AdaptiveStop {
  static constexpr const char* kTargetCiPct = "target_ci_pct";
  static constexpr const char* kAchievedCiPct = "achieved_ci_pct";
  static constexpr const char* kStoppedBy = "stopped_by";
  double target_ci_pct = 0;
  std::optional<double> achieved_ci_pct;
  std::string stopped_by;
};

// What a measured record (status ok or fail) adds to the measurement's identity.
struct CollectiveResult {
  static constexpr const char* kCheck = "check";
  static constexpr const char* kIterations = "iterations";
  static constexpr const char* kWarmupIterations = "warmup_iterations";
  static constexpr const char* kAggregation = "aggregation";
  static constexpr const char* kTimeS = "time_s";
  static constexpr const char* kTiming = "timing";
  static constexpr const char* kAlgbw = "algbw_bytes_per_s";
  static constexpr const char* kBusbw = "busbw_bytes_per_s";
  static constexpr const char* kBusFactor = "bus_factor";
  static constexpr const char* kGroupRanks = "group_ranks";
  static constexpr const char* kRankTimeS = "rank_time_s";
  static constexpr const char* kRankTime = "rank_time";
  static constexpr const char* kStraggler = "straggler";
  static constexpr const char* kIterationTime = "iteration_time";
  static constexpr const char* kWrongElements = "wrong_elements";
  static constexpr const char* kWrongRanks = "wrong_ranks";
  static constexpr const char* kAdaptive = "adaptive";
  bool check = false;
  std::size_t iterations = 0;
  int warmup_iterations = 0;
  std::string aggregation;
  double time_s = 0;
  std::string timing;
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
  double bus_factor = 0;
  std::vector<int> group_ranks;
  std::vector<double> rank_time_s;  // in group-rank order
  RankTimeSpread rank_time;
  CollectiveStraggler straggler;
  IterationTimes iteration_time;
  std::optional<std::uint64_t> wrong_elements;  // nullopt: outputs were not checked
  std::vector<WrongRankEntry> wrong_ranks;
  std::optional<AdaptiveStop> adaptive;
};

// One size and placement of one collective: status ok or fail (with `result`), skipped (the
// backend cannot run it; `reason` says why).
struct CollectiveRecord {
  static constexpr const char* kKind = "collective";
  static constexpr const char* kBackend = "backend";
  static constexpr const char* kCollective = "collective";
  static constexpr const char* kDtype = "dtype";
  static constexpr const char* kRedop = "redop";
  static constexpr const char* kRoot = "root";
  static constexpr const char* kBytes = "bytes";
  static constexpr const char* kCount = "count";
  static constexpr const char* kNranks = "nranks";
  static constexpr const char* kNodes = "nodes";
  static constexpr const char* kScope = "scope";
  static constexpr const char* kRound = "round";
  static constexpr const char* kPairList = "pair_list";
  static constexpr const char* kGroup = "group";
  static constexpr const char* kGroupNodes = "group_nodes";
  static constexpr const char* kInPlace = "in_place";
  static constexpr const char* kCycle = "cycle";
  static constexpr const char* kScopeCluster = "cluster";
  static constexpr const char* kScopeNode = "node";
  static constexpr const char* kScopePairs = "pairs";
  static constexpr const char* kScopeGroups = "groups";

  RecordOrigin origin;
  RecordStatus status = RecordStatus::kOk;
  std::string backend;  // "mpi" or "nccl"
  std::string collective;
  std::string dtype;
  std::optional<std::string> redop;
  std::optional<int> root;
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  int nranks = 0;
  std::size_t nodes = 0;
  std::string scope;
  std::optional<int> round;  // scope pairs only
  bool pair_list = false;    // written only when true
  int group = 0;
  std::vector<std::string> group_nodes;
  bool in_place = false;
  int cycle = 0;
  std::optional<CollectiveResult> result;
  std::optional<std::string> reason;
};

struct NotArrivedEntry {
  static constexpr const char* kRank = "rank";
  static constexpr const char* kHost = "host";
  int rank = 0;
  std::string host;
};

struct RankStateEntry {
  static constexpr const char* kRank = "rank";
  static constexpr const char* kHost = "host";
  static constexpr const char* kResponded = "responded";
  static constexpr const char* kOperationsBegun = "operations_begun";
  static constexpr const char* kInsideOperation = "inside_operation";
  static constexpr const char* kIdleS = "idle_s";
  int rank = 0;
  std::string host;
  bool responded = false;
  std::int64_t operations_begun = 0;
  bool inside_operation = false;
  std::optional<double> idle_s;  // nullopt when the rank did not respond
};

// kind "collective", status "timeout": who did not arrive at which operation.
struct CollectiveTimeoutRecord {
  static constexpr const char* kOperation = "operation";
  static constexpr const char* kTimeoutS = "timeout_s";
  static constexpr const char* kNotArrived = "not_arrived";
  static constexpr const char* kAttributed = "attributed";
  static constexpr const char* kRankStates = "rank_states";

  RecordOrigin origin;
  std::string backend;
  std::string scope;
  std::string operation;
  double timeout_s = 0;
  std::size_t nranks = 0;
  std::vector<NotArrivedEntry> not_arrived;
  bool attributed = false;
  std::vector<RankStateEntry> rank_states;
  std::string reason;
};

// The records as written, fields in schema order.
[[nodiscard]] Json to_json(const CollectiveRecord& record);
[[nodiscard]] Json to_json(const CollectiveTimeoutRecord& record);

}  // namespace commcert
