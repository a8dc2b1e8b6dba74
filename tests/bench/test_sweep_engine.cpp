// The sweep engine driven by a scripted communicator (scripted_communicator.hpp) on the
// single-process control plane: what it hands its observer (rows, per-rank figures, wrong data
// and its rank, skipped sizes, the adaptive stop) for scripted times and findings. The engine
// reads no clock of its own: every time it uses comes from the communicator's results, so the
// script is the only seam a test needs (and nothing sleeps).
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench/measurement.hpp"
#include "bench/sweep_engine.hpp"
#include "comm/control_plane.hpp"
#include "core/stats.hpp"
#include "core/stop_request.hpp"
#include "scripted_communicator.hpp"
#include "sweep_engine_support.hpp"

namespace commcert {
namespace {

using test_support::run_engine;
using test_support::ScriptedCommunicator;
using test_support::ScriptedOperation;
using test_support::small_sweep;

// Seconds that never settle: 1 s and 3 s in turn, so only the budget or the cap stops them.
double alternating(const ScriptedOperation& op) {
  return op.operation % 2 == 0 ? 1.0 : 3.0;
}

TEST(SweepEngine, HandsItsObserverEachRanksMeanAndTheSlowestRankPerIteration) {
  ScriptedCommunicator communicator(4);
  // Rank 1 is the slowest, so neither the first nor the last rank's time can pass for the
  // iteration's.
  const auto rank_seconds = [](int rank, int operation) {
    return (rank == 1 ? 5e-3 : 1e-3 * (rank + 1)) + 1e-4 * operation;
  };
  communicator.seconds = [&rank_seconds](const ScriptedOperation& op) {
    return rank_seconds(op.rank, op.operation);
  };
  auto options = small_sweep();
  options.warmup_iterations = 2;
  const auto run = run_engine(options, communicator);

  ASSERT_EQ(run.observer.rows.size(), 1U);
  EXPECT_EQ(run.outcome.rows, 1);
  for (const Measurement* m :
       {&run.observer.rows[0].out_of_place, &run.observer.rows[0].in_place}) {
    EXPECT_EQ(m->bytes, 4096U);
    EXPECT_EQ(m->count, 1024U);
    EXPECT_EQ(m->nranks, 4);
    EXPECT_EQ(m->warmup_iterations, 2);
    EXPECT_FALSE(m->unsupported.has_value());
    EXPECT_FALSE(m->adaptive.has_value());
    ASSERT_EQ(m->iteration_seconds.size(), 5U);
    for (int i = 0; i < 5; ++i) {
      // The iteration's time is its slowest rank's.
      EXPECT_DOUBLE_EQ(m->iteration_seconds[static_cast<std::size_t>(i)], rank_seconds(1, i));
    }
    ASSERT_EQ(m->ranks.size(), 4U);
    for (int rank = 0; rank < 4; ++rank) {
      const RankMeasurement& entry = m->ranks[static_cast<std::size_t>(rank)];
      EXPECT_EQ(entry.rank, rank);
      double sum = 0;
      for (int i = 0; i < 5; ++i)
        sum += rank_seconds(rank, i);
      EXPECT_DOUBLE_EQ(entry.mean_seconds, sum / 5);
      EXPECT_FALSE(entry.back_to_back_seconds.has_value());
      EXPECT_TRUE(entry.checked);
      EXPECT_EQ(entry.wrong_elements, 0U);
    }
  }
  EXPECT_FALSE(run.observer.rows[0].out_of_place.in_place);
  EXPECT_TRUE(run.observer.rows[0].in_place.in_place);
  EXPECT_EQ(run.outcome.wrong_elements, 0U);
  EXPECT_EQ(run.outcome.failed_measurements, 0);
  EXPECT_FALSE(run.outcome.interrupted);

  // Per placement: one warm-up batch of -w iterations (unchecked, untimed), then -n timed ones.
  ASSERT_EQ(communicator.plans.size(), 4U);
  for (const std::size_t warm_up : {0U, 2U}) {
    EXPECT_FALSE(communicator.plans[warm_up].timed);
    EXPECT_FALSE(communicator.plans[warm_up].check);
    EXPECT_EQ(communicator.plans[warm_up].iterations, 2);
    EXPECT_TRUE(communicator.plans[warm_up + 1].timed);
    EXPECT_TRUE(communicator.plans[warm_up + 1].check);
    EXPECT_EQ(communicator.plans[warm_up + 1].iterations, 5);
  }
}

TEST(SweepEngine, BackToBackSpansBecomeTheRanksTimePerOperation) {
  ScriptedCommunicator communicator(2);
  communicator.back_to_back = [](int) { return true; };
  communicator.seconds = [](const ScriptedOperation& op) { return op.rank == 0 ? 2e-3 : 4e-3; };
  const auto run = run_engine(small_sweep(), communicator);

  ASSERT_EQ(run.observer.rows.size(), 1U);
  const auto& ranks = run.observer.rows[0].out_of_place.ranks;
  ASSERT_EQ(ranks.size(), 2U);
  ASSERT_TRUE(ranks[0].back_to_back_seconds.has_value());
  EXPECT_DOUBLE_EQ(*ranks[0].back_to_back_seconds, 2e-3);
  ASSERT_TRUE(ranks[1].back_to_back_seconds.has_value());
  EXPECT_DOUBLE_EQ(*ranks[1].back_to_back_seconds, 4e-3);
}

TEST(SweepEngine, OneBatchNotBackToBackLeavesTheRankWithoutASpan) {
  // Two adaptive batches; only the first ran back to back, so no span covers every operation
  // and the figures must come from the windows.
  ScriptedCommunicator communicator(2);
  communicator.seconds = alternating;
  communicator.back_to_back = [](int batch) { return batch == 0; };
  auto options = small_sweep();
  options.target_ci_percent = 0.01;
  options.size_budget_seconds = 1e9;
  options.max_iterations = 10;
  const auto run = run_engine(options, communicator);

  const Measurement& m = run.observer.rows.at(0).out_of_place;
  ASSERT_EQ(m.iteration_seconds.size(), 10U);
  for (const auto& entry : m.ranks)
    EXPECT_FALSE(entry.back_to_back_seconds.has_value()) << "rank " << entry.rank;
  EXPECT_EQ(derive_figures(m, RankAggregation::kMean).timing, TimingMethod::kWindows);
}

TEST(SweepEngine, WrongDataIsCountedOnTheRankThatFoundIt) {
  ScriptedCommunicator communicator(4);
  // Rank 2 finds 3 wrong elements in timed iterations 1 and 4 of the out-of-place measurement.
  communicator.wrong_elements = [](const ScriptedOperation& op) {
    const bool hit = op.rank == 2 && !op.in_place && (op.operation == 1 || op.operation == 4);
    return std::uint64_t{hit ? 3U : 0U};
  };
  const auto run = run_engine(small_sweep(), communicator);

  ASSERT_EQ(run.observer.rows.size(), 1U);
  const Measurement& wrong = run.observer.rows[0].out_of_place;
  ASSERT_EQ(wrong.ranks.size(), 4U);
  for (int rank = 0; rank < 4; ++rank) {
    const auto& entry = wrong.ranks[static_cast<std::size_t>(rank)];
    EXPECT_TRUE(entry.checked);
    EXPECT_EQ(entry.wrong_elements, rank == 2 ? 6U : 0U) << "rank " << rank;
    EXPECT_EQ(entry.wrong_iterations, rank == 2 ? 2 : 0) << "rank " << rank;
  }
  const auto figures = derive_figures(wrong, RankAggregation::kMean);
  ASSERT_TRUE(figures.wrong_elements.has_value());
  EXPECT_EQ(*figures.wrong_elements, 6U);
  EXPECT_EQ(figures.wrong_ranks, std::vector<int>{2});

  const auto clean = derive_figures(run.observer.rows[0].in_place, RankAggregation::kMean);
  EXPECT_EQ(clean.wrong_elements, std::optional<std::uint64_t>{0});
  EXPECT_TRUE(clean.wrong_ranks.empty());

  EXPECT_EQ(run.outcome.wrong_elements, 6U);
  EXPECT_EQ(run.outcome.failed_measurements, 1);
}

TEST(SweepEngine, AWrongElementCountAboveDoublePrecisionReachesProcessZeroExactly) {
  // 2^53 + 1 is the first count a double cannot hold: a count passed through one would arrive
  // as 2^53.
  constexpr std::uint64_t kCount = (std::uint64_t{1} << 53) + 1;
  ScriptedCommunicator communicator(2);
  communicator.wrong_elements = [](const ScriptedOperation& op) {
    return op.rank == 1 && !op.in_place && op.operation == 0 ? kCount : std::uint64_t{0};
  };
  const auto run = run_engine(small_sweep(), communicator);

  const Measurement& m = run.observer.rows.at(0).out_of_place;
  ASSERT_EQ(m.ranks.size(), 2U);
  EXPECT_EQ(m.ranks[1].wrong_elements, kCount);
  EXPECT_EQ(m.ranks[1].wrong_iterations, 1);
  EXPECT_EQ(run.outcome.wrong_elements, kCount);
}

TEST(SweepEngine, WrongDataAddsUpAcrossTheBatchesOfAnAdaptiveMeasurement) {
  ScriptedCommunicator communicator(3);
  communicator.seconds = alternating;
  communicator.wrong_elements = [](const ScriptedOperation& op) {
    return std::uint64_t{op.rank == 1 ? 1U : 0U};
  };
  auto options = small_sweep();
  options.target_ci_percent = 0.01;
  options.size_budget_seconds = 1e9;
  options.max_iterations = 10;  // two batches of 5
  const auto run = run_engine(options, communicator);

  const Measurement& m = run.observer.rows.at(0).out_of_place;
  ASSERT_EQ(m.iteration_seconds.size(), 10U);
  ASSERT_EQ(m.ranks.size(), 3U);
  EXPECT_EQ(m.ranks[1].wrong_elements, 10U);
  EXPECT_EQ(m.ranks[1].wrong_iterations, 10);
  EXPECT_EQ(m.ranks[0].wrong_elements, 0U);
  EXPECT_EQ(m.ranks[2].wrong_elements, 0U);
  EXPECT_EQ(run.outcome.wrong_elements, 20U);  // both placements
  EXPECT_EQ(run.outcome.failed_measurements, 2);
}

TEST(SweepEngine, WithChecksOffNothingIsCheckedSoNothingIsCountedWrong) {
  ScriptedCommunicator communicator(2);
  communicator.wrong_elements = [](const ScriptedOperation&) { return std::uint64_t{1}; };
  auto options = small_sweep();
  options.check = false;
  const auto run = run_engine(options, communicator);

  ASSERT_EQ(run.observer.rows.size(), 1U);
  const Measurement& m = run.observer.rows[0].out_of_place;
  EXPECT_FALSE(m.check_requested);
  for (const auto& entry : m.ranks)
    EXPECT_FALSE(entry.checked);
  EXPECT_FALSE(derive_figures(m, RankAggregation::kMean).wrong_elements.has_value());
  EXPECT_EQ(run.outcome.failed_measurements, 0);
}

TEST(SweepEngine, AnUnsupportedPlacementIsReportedWithItsReasonAndNeverRun) {
  ScriptedCommunicator communicator(2);
  communicator.unsupported_reason = [](CollectiveKind, DataType, ReduceOp, bool in_place) {
    return in_place ? std::optional<std::string>("no in-place here") : std::nullopt;
  };
  auto options = small_sweep();
  options.warmup_iterations = 3;
  const auto run = run_engine(options, communicator);

  ASSERT_EQ(run.observer.rows.size(), 1U);
  EXPECT_FALSE(run.observer.rows[0].out_of_place.unsupported.has_value());
  EXPECT_EQ(run.observer.rows[0].out_of_place.iteration_seconds.size(), 5U);
  EXPECT_EQ(run.observer.rows[0].in_place.unsupported, "no in-place here");
  EXPECT_TRUE(run.observer.rows[0].in_place.ranks.empty());
  // What did not run had no warm-up either.
  EXPECT_EQ(run.observer.rows[0].out_of_place.warmup_iterations, 3);
  EXPECT_EQ(run.observer.rows[0].in_place.warmup_iterations, 0);
  for (const auto& plan : communicator.plans)
    EXPECT_FALSE(plan.in_place);
}

TEST(SweepEngine, AnUnsupportedTypeSkipsItsRowsAndMeasuresTheOthers) {
  ScriptedCommunicator communicator(2);
  communicator.unsupported_reason = [](CollectiveKind, DataType type, ReduceOp, bool) {
    return type == DataType::kFp8E4M3 ? std::optional<std::string>("fp8 needs Hopper")
                                      : std::nullopt;
  };
  auto options = small_sweep();
  options.types = {DataType::kFp8E4M3, DataType::kFloat};
  const auto run = run_engine(options, communicator);

  ASSERT_EQ(run.observer.rows.size(), 2U);
  EXPECT_EQ(run.observer.rows[0].out_of_place.type, DataType::kFp8E4M3);
  EXPECT_EQ(run.observer.rows[0].out_of_place.unsupported, "fp8 needs Hopper");
  EXPECT_EQ(run.observer.rows[0].in_place.unsupported, "fp8 needs Hopper");
  EXPECT_EQ(run.observer.rows[1].out_of_place.type, DataType::kFloat);
  EXPECT_FALSE(run.observer.rows[1].out_of_place.unsupported.has_value());
  for (const auto& plan : communicator.plans)
    EXPECT_EQ(plan.pattern.type, DataType::kFloat);
}

TEST(SweepEngine, ASizeWhoseBufferFitsTheCapExactlyIsMeasuredOneElementMoreIsSkipped) {
  ScriptedCommunicator communicator(2);
  communicator.buffer_cap_bytes = 1U << 20;
  auto options = small_sweep();
  options.min_bytes = 1U << 20;        // 262144 floats: exactly the cap
  options.max_bytes = (1U << 20) + 4;  // one float more
  options.step_bytes = 4;
  const auto run = run_engine(options, communicator);

  ASSERT_EQ(run.observer.rows.size(), 1U);
  EXPECT_EQ(run.observer.rows[0].out_of_place.bytes, 1U << 20);
  EXPECT_EQ(run.outcome.rows, 1);
  ASSERT_EQ(run.observer.notes.size(), 1U);
  EXPECT_NE(run.observer.notes[0].find("skipped"), std::string::npos) << run.observer.notes[0];
  EXPECT_NE(run.observer.notes[0].find("allreduce float"), std::string::npos)
      << run.observer.notes[0];
  // Buffers are reserved once, for the largest size that is measured.
  EXPECT_EQ(communicator.reserved_bytes, std::vector<std::uint64_t>{1U << 20});
  for (const auto& plan : communicator.plans)
    EXPECT_EQ(plan.pattern.count, 262144U);
  EXPECT_EQ(communicator.releases, 1);
}

TEST(SweepEngine, ASizeOfOneElementIsMeasured) {
  // The smallest size that holds data: one float. Every rank takes part and runs it; only a
  // size of no element at all has nothing to run.
  ScriptedCommunicator communicator(2);
  auto options = small_sweep();
  options.min_bytes = 4;
  options.max_bytes = 4;
  const auto run = run_engine(options, communicator);

  ASSERT_EQ(run.observer.rows.size(), 1U);
  EXPECT_EQ(run.observer.rows[0].out_of_place.bytes, 4U);
  ASSERT_FALSE(communicator.plans.empty());
  for (const auto& plan : communicator.plans)
    EXPECT_EQ(plan.pattern.count, 1U);
  EXPECT_EQ(run.observer.rows[0].out_of_place.iteration_seconds.size(), 5U);
  EXPECT_EQ(run.observer.rows[0].out_of_place.ranks.size(), 2U);
}

TEST(SweepEngine, RootedCollectivesWithRootMinusOneRunEveryRootInTurnInsideTheirCollective) {
  ScriptedCommunicator communicator(3);
  auto options = small_sweep();
  options.collectives = {CollectiveKind::kAllReduce, CollectiveKind::kBroadcast};
  options.root = -1;
  const auto run = run_engine(options, communicator);

  const std::vector<std::string> events{"start allreduce 0", "end allreduce 0", "start broadcast 0",
                                        "end broadcast 0"};
  EXPECT_EQ(run.observer.events, events);
  ASSERT_EQ(run.observer.rows.size(), 4U);
  EXPECT_FALSE(run.observer.rows[0].out_of_place.root.has_value());
  for (int root = 0; root < 3; ++root) {
    const Measurement& m = run.observer.rows[static_cast<std::size_t>(root) + 1].out_of_place;
    EXPECT_EQ(m.collective, CollectiveKind::kBroadcast);
    EXPECT_EQ(m.root, root);
  }
}

TEST(SweepEngine, ASteadyTimeReachesTheCiTargetAfterTheFirstBatch) {
  ScriptedCommunicator communicator(2);
  auto options = small_sweep();
  options.target_ci_percent = 1.0;
  const auto run = run_engine(options, communicator);

  ASSERT_EQ(run.observer.rows.size(), 1U);
  const Measurement& m = run.observer.rows[0].out_of_place;
  ASSERT_TRUE(m.adaptive.has_value());
  EXPECT_EQ(m.adaptive->stopped_by, "ci");
  EXPECT_DOUBLE_EQ(m.adaptive->target_ci_percent, 1.0);
  EXPECT_EQ(m.adaptive->achieved_ci_percent, std::optional<double>(0.0));
  EXPECT_EQ(m.iteration_seconds.size(), 5U);
}

// The CI the first batch of `alternating` times reaches, as the engine computes it.
double ci_percent_of_first_batch() {
  std::vector<double> samples;
  for (int i = 0; i < 5; ++i)
    samples.push_back(alternating({0, {}, false, i}));
  const auto summary = summarize(samples);
  return 100.0 * *ci95_half_width(summary) / summary.mean;
}

TEST(SweepEngine, ACiExactlyAtTheTargetStopsOneJustAboveItMeasuresAnotherBatch) {
  const double reached = ci_percent_of_first_batch();
  {
    ScriptedCommunicator communicator(2);
    communicator.seconds = alternating;
    auto options = small_sweep();
    options.target_ci_percent = reached;
    options.size_budget_seconds = 1e9;
    const auto run = run_engine(options, communicator);
    const Measurement& m = run.observer.rows.at(0).out_of_place;
    EXPECT_EQ(m.adaptive->stopped_by, "ci");
    EXPECT_EQ(m.adaptive->achieved_ci_percent, std::optional<double>(reached));
    EXPECT_EQ(m.iteration_seconds.size(), 5U);
  }
  {
    ScriptedCommunicator communicator(2);
    communicator.seconds = alternating;
    auto options = small_sweep();
    options.target_ci_percent = std::nextafter(reached, 0.0);
    options.size_budget_seconds = 1e9;
    const auto run = run_engine(options, communicator);
    const Measurement& m = run.observer.rows.at(0).out_of_place;
    // A second batch of 5 (half the iterations so far, at least 5) narrows the interval.
    EXPECT_EQ(m.iteration_seconds.size(), 10U);
    EXPECT_EQ(m.adaptive->stopped_by, "ci");
  }
  {
    // One step above the reached CI: the first batch is enough.
    ScriptedCommunicator communicator(2);
    communicator.seconds = alternating;
    auto options = small_sweep();
    options.target_ci_percent = std::nextafter(reached, 100.0);
    options.size_budget_seconds = 1e9;
    const auto run = run_engine(options, communicator);
    const Measurement& m = run.observer.rows.at(0).out_of_place;
    EXPECT_EQ(m.iteration_seconds.size(), 5U);
    EXPECT_EQ(m.adaptive->stopped_by, "ci");
  }
}

TEST(SweepEngine, TheSizeBudgetStopsWhenSpentExactlyAndNotBefore) {
  // The first batch spends 1 + 3 + 1 + 3 + 1 = 9 s of (scripted) operation time.
  for (const auto& [budget, iterations] :
       std::vector<std::pair<double, std::size_t>>{{9.0, 5}, {std::nextafter(9.0, 10.0), 10}}) {
    ScriptedCommunicator communicator(2);
    communicator.seconds = alternating;
    auto options = small_sweep();
    options.target_ci_percent = 0.01;
    options.size_budget_seconds = budget;
    const auto run = run_engine(options, communicator);
    const Measurement& m = run.observer.rows.at(0).out_of_place;
    EXPECT_EQ(m.adaptive->stopped_by, "budget") << "budget " << budget;
    EXPECT_EQ(m.iteration_seconds.size(), iterations) << "budget " << budget;
  }
}

TEST(SweepEngine, TheIterationCapStopsAtTheCap) {
  for (const int cap : {5, 6, 10, 15}) {
    ScriptedCommunicator communicator(2);
    communicator.seconds = alternating;
    auto options = small_sweep();
    options.target_ci_percent = 0.01;
    options.size_budget_seconds = 1e9;
    options.max_iterations = cap;
    const auto run = run_engine(options, communicator);
    const Measurement& m = run.observer.rows.at(0).out_of_place;
    EXPECT_EQ(m.adaptive->stopped_by, "max_iterations") << "cap " << cap;
    EXPECT_EQ(m.iteration_seconds.size(), static_cast<std::size_t>(cap)) << "cap " << cap;
    ASSERT_TRUE(m.adaptive->achieved_ci_percent.has_value());
    EXPECT_GT(*m.adaptive->achieved_ci_percent, 0.01);
  }
}

TEST(SweepEngine, AStopRequestEndsTheSweepAfterTheCurrentRow) {
  ScriptedCommunicator communicator(2);
  int timed_runs = 0;
  communicator.before_run = [&timed_runs](const LoopPlan& plan) {
    if (plan.timed && ++timed_runs == 1) stop_request().store(true);
  };
  auto options = small_sweep();
  options.max_bytes = 3 * 4096;
  options.step_bytes = 4096;
  const auto run = run_engine(options, communicator);
  stop_request().store(false);

  EXPECT_TRUE(run.outcome.interrupted);
  ASSERT_EQ(run.observer.rows.size(), 1U);  // both placements of the first size, then no more
  EXPECT_EQ(run.outcome.rows, 1);
  EXPECT_EQ(run.observer.events,
            (std::vector<std::string>{"start allreduce 0", "end allreduce 0"}));
}

}  // namespace
}  // namespace commcert
