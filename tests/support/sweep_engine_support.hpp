#pragma once

// What the sweep engine's tests share: an observer that keeps everything process 0 is handed,
// a small sweep, rank maps, and one run of the engine.

#include <string>
#include <vector>

#include "bench/measurement.hpp"
#include "bench/sweep_engine.hpp"
#include "comm/control_plane.hpp"
#include "core/rank_identity.hpp"
#include "scripted_communicator.hpp"

namespace commcert::test_support {

struct Row {
  Measurement out_of_place;
  Measurement in_place;
};

// Process 0's observer: keeps everything the engine reports, in order.
class RecordingObserver final : public SweepObserver {
 public:
  void collective_started(const CollectiveInfo& collective, int cycle) override {
    events.push_back("start " + std::string(collective.name) + " " + std::to_string(cycle));
  }
  void row_finished(const Measurement& out_of_place, const Measurement& in_place) override {
    rows.push_back({out_of_place, in_place});
  }
  void collective_finished(const CollectiveInfo& collective, int cycle) override {
    events.push_back("end " + std::string(collective.name) + " " + std::to_string(cycle));
  }
  void note(const std::string& message) override { notes.push_back(message); }

  std::vector<std::string> events;
  std::vector<Row> rows;
  std::vector<std::string> notes;
};

// One small all_reduce size, 5 timed iterations, no warm-up unless a test asks.
inline SweepOptions small_sweep() {
  SweepOptions options;
  options.collectives = {CollectiveKind::kAllReduce};
  options.min_bytes = 4096;
  options.max_bytes = 4096;
  options.iterations = 5;
  options.warmup_iterations = 0;
  return options;
}

// A job of one process per node: node i ("node<i>") has ranks_per_node[i] ranks, numbered in
// node order, driven by process i.
inline std::vector<RankIdentity> nodes_with_ranks(const std::vector<int>& ranks_per_node) {
  std::vector<RankIdentity> out;
  for (std::size_t node = 0; node < ranks_per_node.size(); ++node) {
    for (int local = 0; local < ranks_per_node[node]; ++local) {
      RankIdentity identity;
      identity.rank = static_cast<int>(out.size());
      identity.process = static_cast<int>(node);
      identity.node = "node" + std::to_string(node);
      identity.hostname = identity.node;
      identity.local_rank = local;
      out.push_back(identity);
    }
  }
  return out;
}

inline std::vector<RankIdentity> one_node(int ranks) {
  return nodes_with_ranks({ranks});
}

struct EngineRun {
  SweepOutcome outcome;
  RecordingObserver observer;
};

inline EngineRun run_engine(const SweepOptions& options, ScriptedCommunicator& communicator,
                            ControlPlane& control, const std::vector<RankIdentity>& ranks,
                            bool show_progress = false) {
  const FaultPlan no_faults;
  EngineRun run;
  SweepEngine engine(options, communicator, control, nullptr, no_faults, ranks, &run.observer,
                     show_progress);
  run.outcome = engine.run();
  return run;
}

// One process driving every rank of one node.
inline EngineRun run_engine(const SweepOptions& options, ScriptedCommunicator& communicator) {
  SingleProcessControlPlane control;
  return run_engine(options, communicator, control, one_node(communicator.size()));
}

}  // namespace commcert::test_support
