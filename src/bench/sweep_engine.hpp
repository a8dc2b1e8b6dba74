#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/collectives.hpp"
#include "bench/groups.hpp"
#include "bench/measurement.hpp"
#include "bench/sweep_options.hpp"
#include "comm/communicator.hpp"
#include "comm/control_plane.hpp"
#include "comm/fault_injection.hpp"
#include "core/rank_identity.hpp"

namespace commcert {

class Watchdog;

// Receives results on process 0 as they complete; implemented by the command (records, table).
class SweepObserver {
 public:
  virtual ~SweepObserver() = default;
  virtual void collective_started(const CollectiveInfo& collective, int cycle) = 0;
  // One table row: both placements of one size for one group (either may be unsupported).
  virtual void row_finished(const Measurement& out_of_place, const Measurement& in_place) = 0;
  virtual void collective_finished(const CollectiveInfo& collective, int cycle) = 0;
  // Something the user should know that is not a measurement (a size skipped, a cap applied).
  virtual void note(const std::string& message) = 0;
};

struct SweepOutcome {
  int rows = 0;
  std::uint64_t wrong_elements = 0;
  int failed_measurements = 0;  // measurements in which some rank saw wrong elements
  bool interrupted = false;
};

// Owns the order of the sweep (rounds of groups, collectives, types, ops, roots, sizes), warm-up,
// timed batches, adaptive stopping and the exchange of per-rank results; the Communicator owns how
// an operation runs. Every process runs the same engine with the same options and rank map and
// so takes the same decisions; only process 0 receives results.
class SweepEngine {
 public:
  SweepEngine(const SweepOptions& options, Communicator& communicator, ControlPlane& control,
              Watchdog* watchdog, const FaultPlan& faults, const std::vector<RankIdentity>& ranks,
              SweepObserver* observer, bool show_progress);

  SweepOutcome run();

  // A stop request (core/stop_request.hpp) on any rank ends the sweep after the current row on
  // every rank.
 private:
  struct Point {
    const CollectiveInfo* collective;
    DataType type;
    std::optional<ReduceOp> op;
    std::optional<int> root;
  };
  // What every process knows about one size in one round: per group, the per-rank count (0 when
  // the group skips this size) and the size column.
  struct SizeInRound {
    std::vector<std::uint64_t> counts;
    std::vector<std::uint64_t> bytes;
  };

  struct TimedSeries;

  // One size and placement for every group of `round`: the steps below, in order. Sets `stop`
  // when any process asked to stop.
  std::vector<Measurement> measure(const Point& point, const GroupRound& round,
                                   Communicator* active, const SizeInRound& size, bool in_place,
                                   int cycle, bool& stop);
  // What every measurement is, before anything runs.
  [[nodiscard]] std::vector<Measurement> describe_measurements(const Point& point,
                                                               const GroupRound& round,
                                                               const SizeInRound& size,
                                                               bool in_place, int cycle) const;
  // Why some rank cannot run this placement (collective over processes: all skip together).
  [[nodiscard]] std::optional<std::string> agreed_unsupported(const Point& point,
                                                              const Communicator* active,
                                                              bool in_place);
  // What this process's group runs; `mine` is its measurement, nullptr when it sits this out.
  [[nodiscard]] LoopPlan loop_plan(const Point& point, const Measurement* mine,
                                   const Communicator* active, bool in_place) const;
  void warm_up(Communicator& active, LoopPlan plan) const;
  // Runs `iterations` timed and checked iterations (when `participant`), then exchanges every
  // group's slowest-rank times and the stop flag with every process.
  void run_timed_batch(TimedSeries& series, LoopPlan plan, Communicator* participant, int mine,
                       int iterations, bool& stop);
  // Every rank's result, on process 0 (empty elsewhere).
  [[nodiscard]] std::map<int, RankMeasurement> gather_rank_results(const TimedSeries& series);
  std::vector<Point> points() const;
  [[nodiscard]] std::uint64_t agreed_buffer_cap();
  [[nodiscard]] SizeInRound size_in_round(const Point& point, const GroupRound& round,
                                          std::uint64_t size, std::uint64_t cap) const;
  [[nodiscard]] int my_group(const GroupRound& round) const;
  // The communicator `round` runs on: the job's (cluster scope), or one split for the round and
  // kept in `split` (nullptr where this process sits the round out).
  Communicator* round_communicator(const GroupRound& round, std::unique_ptr<Communicator>& split);
  // Both placements of one size of `point` in `round`, each group's row counted into `outcome`;
  // notes once per point (`noted_skip`) that some groups skip a size.
  void measure_size(const Point& point, const GroupRound& round, Communicator* active,
                    std::uint64_t size, std::uint64_t cap, int cycle, bool& noted_skip, bool& stop,
                    SweepOutcome& outcome);
  // Bytes per buffer of this process's largest measurement in `round`, so buffers are allocated
  // once per round.
  [[nodiscard]] std::uint64_t largest_buffer_bytes(const std::vector<Point>& points,
                                                   const std::vector<std::uint64_t>& sizes,
                                                   const GroupRound& round,
                                                   std::uint64_t cap) const;

  const SweepOptions& options_;
  Communicator& communicator_;
  ControlPlane& control_;
  Watchdog* watchdog_;
  const FaultPlan& faults_;
  FaultPlan round_faults_;  // faults_ as they apply to the groups of the current round
  const std::vector<RankIdentity>& ranks_;
  SweepObserver* observer_;
  bool show_progress_;
};

}  // namespace commcert
