// The sweep engine's plan on one process: which points it measures (ops, types, roots), what each
// measurement record says about itself, the warm-up, the adaptive batch sizes, cycles and stop
// requests, the notes and the progress line a user watches.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bench/measurement.hpp"
#include "bench/sweep_engine.hpp"
#include "comm/fault_injection.hpp"
#include "comm/watchdog.hpp"
#include "core/stop_request.hpp"
#include "scripted_communicator.hpp"
#include "scripted_control_plane.hpp"
#include "sweep_engine_support.hpp"

namespace commcert {
namespace {

using test_support::run_engine;
using test_support::ScriptedCommunicator;
using test_support::ScriptedOperation;
using test_support::small_sweep;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Lines of the progress output that carry a percentage (not the closing summary).
std::vector<std::string> progress_lines(const std::string& output) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < output.size()) {
    const auto end = output.find('\n', start);
    const std::string line = output.substr(start, end - start);
    if (line.find("% |") != std::string::npos) out.push_back(line);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

// Raises the stop signal before the `n`-th timed batch (from 1) of the sweep.
void stop_before_timed_batch(ScriptedCommunicator& communicator, int n) {
  communicator.before_run = [n, seen = 0](const LoopPlan& plan) mutable {
    if (plan.timed && ++seen == n) stop_request().store(true);
  };
}

TEST(SweepEnginePlan, EveryMeasurementSaysWhatItMeasuredAndWhere) {
  ScriptedCommunicator communicator(2);
  const auto run = run_engine(small_sweep(), communicator);

  ASSERT_EQ(run.observer.rows.size(), 1U);
  for (const Measurement* m :
       {&run.observer.rows[0].out_of_place, &run.observer.rows[0].in_place}) {
    EXPECT_EQ(m->collective, CollectiveKind::kAllReduce);
    EXPECT_EQ(m->op, ReduceOp::kSum);
    EXPECT_FALSE(m->root.has_value());
    EXPECT_EQ(m->scope, "cluster");
    EXPECT_EQ(m->round, 0);
    EXPECT_EQ(m->cycle, 0);
    EXPECT_EQ(m->group, 0);
    EXPECT_FALSE(m->pair_list);
    EXPECT_THAT(m->group_nodes, ElementsAre("node0"));
    EXPECT_TRUE(m->check_requested);
  }
}

// Every op of a reduction, every type, each a measurement of its own and run with its own data.
TEST(SweepEnginePlan, EachOpAndTypeIsMeasuredAndRunAsItself) {
  ScriptedCommunicator communicator(2);
  auto options = small_sweep();
  options.types = {DataType::kDouble};
  options.ops = {ReduceOp::kMax, ReduceOp::kMin};
  const auto run = run_engine(options, communicator);

  ASSERT_EQ(run.observer.rows.size(), 2U);
  EXPECT_EQ(run.observer.rows[0].out_of_place.op, ReduceOp::kMax);
  EXPECT_EQ(run.observer.rows[1].out_of_place.op, ReduceOp::kMin);
  ASSERT_EQ(communicator.plans.size(), 4U);
  for (std::size_t i = 0; i < communicator.plans.size(); ++i) {
    EXPECT_EQ(communicator.plans[i].pattern.type, DataType::kDouble);
    EXPECT_EQ(communicator.plans[i].pattern.op, i < 2 ? ReduceOp::kMax : ReduceOp::kMin);
    EXPECT_EQ(communicator.plans[i].pattern.nranks, 2);
    EXPECT_EQ(communicator.plans[i].pattern.count, 512U);
    EXPECT_EQ(communicator.plans[i].pattern.root, 0);  // no root: the pattern's default
  }
}

// A root of 0 or more is that root alone; -1 is every rank in turn (tested with the events).
TEST(SweepEnginePlan, AGivenRootIsTheOnlyRootMeasured) {
  for (const int root : {0, 1, 2}) {
    ScriptedCommunicator communicator(3);
    auto options = small_sweep();
    options.collectives = {CollectiveKind::kBroadcast};
    options.root = root;
    const auto run = run_engine(options, communicator);
    ASSERT_EQ(run.observer.rows.size(), 1U) << "root " << root;
    EXPECT_EQ(run.observer.rows[0].out_of_place.root, root);
    for (const auto& plan : communicator.plans)
      EXPECT_EQ(plan.pattern.root, root);
    for (const auto& plan : communicator.plans)
      EXPECT_EQ(plan.pattern.collective, CollectiveKind::kBroadcast);
  }
}

TEST(SweepEnginePlan, NoWarmUpIterationsRunNoWarmUpBatchOneRunsOne) {
  ScriptedCommunicator communicator(2);
  const auto run = run_engine(small_sweep(), communicator);
  ASSERT_EQ(communicator.plans.size(), 2U);
  for (const auto& plan : communicator.plans)
    EXPECT_TRUE(plan.timed);
  EXPECT_EQ(run.observer.rows.at(0).out_of_place.warmup_iterations, 0);

  ScriptedCommunicator warmed(2);
  auto options = small_sweep();
  options.warmup_iterations = 1;
  (void)run_engine(options, warmed);
  ASSERT_EQ(warmed.plans.size(), 4U);
  EXPECT_FALSE(warmed.plans[0].timed);
  EXPECT_EQ(warmed.plans[0].iterations, 1);
}

// Events follow the order the collectives were asked for, whatever their order in the table.
TEST(SweepEnginePlan, EachCollectiveStartsAndEndsInTheOrderAsked) {
  ScriptedCommunicator communicator(2);
  auto options = small_sweep();
  options.collectives = {CollectiveKind::kBroadcast, CollectiveKind::kAllReduce};
  const auto run = run_engine(options, communicator);
  EXPECT_THAT(run.observer.events, ElementsAre("start broadcast 0", "end broadcast 0",
                                               "start allreduce 0", "end allreduce 0"));
}

// Spans of batches run back to back add up over the batches: the figure per operation covers
// every batch, not the last one.
TEST(SweepEnginePlan, BackToBackSpansAddUpOverEveryBatch) {
  ScriptedCommunicator communicator(1);
  communicator.back_to_back = [](int) { return true; };
  communicator.seconds = [](const ScriptedOperation& op) {
    return op.operation % 2 == 0 ? 1.0 : 3.0;
  };
  auto options = small_sweep();
  options.target_ci_percent = 0.01;
  options.size_budget_seconds = 1e9;
  options.max_iterations = 10;  // two batches of 5
  const auto run = run_engine(options, communicator);

  const Measurement& m = run.observer.rows.at(0).out_of_place;
  // The iterations in the order they ran, batch after batch.
  EXPECT_THAT(m.iteration_seconds, ElementsAre(1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0));
  ASSERT_EQ(m.ranks.size(), 1U);
  EXPECT_DOUBLE_EQ(m.ranks[0].mean_seconds, 2.0);  // over both batches
  ASSERT_TRUE(m.ranks[0].back_to_back_seconds.has_value());
  EXPECT_DOUBLE_EQ(*m.ranks[0].back_to_back_seconds, 2.0);
}

TEST(SweepEnginePlan, OneWrongElementFailsItsMeasurement) {
  ScriptedCommunicator communicator(2);
  communicator.wrong_elements = [](const ScriptedOperation& op) {
    return std::uint64_t{op.rank == 1 && !op.in_place && op.operation == 0 ? 1U : 0U};
  };
  const auto run = run_engine(small_sweep(), communicator);
  EXPECT_EQ(run.outcome.wrong_elements, 1U);
  EXPECT_EQ(run.outcome.failed_measurements, 1);
}

// Operations that took no measurable time have no confidence interval (not a NaN); the
// iteration cap stops them.
TEST(SweepEnginePlan, TimesOfZeroReachNoConfidenceInterval) {
  ScriptedCommunicator communicator(2);
  communicator.seconds = [](const ScriptedOperation&) { return 0.0; };
  auto options = small_sweep();
  options.target_ci_percent = 1.0;
  options.max_iterations = 10;
  const auto run = run_engine(options, communicator);

  const Measurement& m = run.observer.rows.at(0).out_of_place;
  ASSERT_TRUE(m.adaptive.has_value());
  EXPECT_EQ(m.adaptive->achieved_ci_percent, std::nullopt);
  EXPECT_EQ(m.adaptive->stopped_by, "max_iterations");
}

// Each adaptive batch is half the iterations so far, at least 5, and never past the cap.
TEST(SweepEnginePlan, AdaptiveBatchesAreHalfTheIterationsSoFar) {
  ScriptedCommunicator communicator(2);
  communicator.seconds = [](const ScriptedOperation& op) {
    return op.operation % 2 == 0 ? 1.0 : 3.0;
  };
  auto options = small_sweep();
  options.target_ci_percent = 0.01;
  options.size_budget_seconds = 1e9;
  options.max_iterations = 40;
  options.collectives = {CollectiveKind::kAllReduce};
  const auto run = run_engine(options, communicator);

  std::vector<int> out_of_place_batches;
  for (const auto& plan : communicator.timed_plans()) {
    if (!plan.in_place) out_of_place_batches.push_back(plan.iterations);
  }
  EXPECT_THAT(out_of_place_batches, ElementsAre(5, 5, 5, 7, 11, 7));
  EXPECT_EQ(run.observer.rows.at(0).out_of_place.iteration_seconds.size(), 40U);
}

TEST(SweepEnginePlan, EachCycleRunsEveryRowAndItsRowsSayWhichCycle) {
  ScriptedCommunicator communicator(2);
  auto options = small_sweep();
  options.cycles = 2;
  const auto run = run_engine(options, communicator);

  ASSERT_EQ(run.observer.rows.size(), 2U);
  EXPECT_EQ(run.outcome.rows, 2);
  for (int cycle = 0; cycle < 2; ++cycle) {
    const auto& row = run.observer.rows[static_cast<std::size_t>(cycle)];
    EXPECT_EQ(row.out_of_place.cycle, cycle);
    EXPECT_EQ(row.in_place.cycle, cycle);
    EXPECT_FALSE(row.out_of_place.in_place);
    EXPECT_TRUE(row.in_place.in_place);
  }
  EXPECT_THAT(run.observer.events, ElementsAre("start allreduce 0", "end allreduce 0",
                                               "start allreduce 1", "end allreduce 1"));
}

// --cycles 0 runs until a stop request, then ends after the current row.
TEST(SweepEnginePlan, ZeroCyclesRunUntilAStopRequest) {
  ScriptedCommunicator communicator(2);
  stop_before_timed_batch(communicator, 7);  // the out-of-place batch of the fourth cycle
  auto options = small_sweep();
  options.cycles = 0;
  const auto run = run_engine(options, communicator);
  stop_request().store(false);

  EXPECT_TRUE(run.outcome.interrupted);
  ASSERT_EQ(run.observer.rows.size(), 4U);
  EXPECT_EQ(run.observer.rows[3].out_of_place.cycle, 3);
}

TEST(SweepEnginePlan, AStopRequestEndsTheSweepBeforeTheNextCollective) {
  ScriptedCommunicator communicator(2);
  stop_before_timed_batch(communicator, 1);
  auto options = small_sweep();
  options.collectives = {CollectiveKind::kAllReduce, CollectiveKind::kAllGather};
  const auto run = run_engine(options, communicator);
  stop_request().store(false);

  ASSERT_EQ(run.observer.rows.size(), 1U);
  EXPECT_THAT(run.observer.events, ElementsAre("start allreduce 0", "end allreduce 0"));
}

// Sizes too small for a rank's aligned share are skipped and noted once; the next sizes are
// measured.
TEST(SweepEnginePlan, ASizeTooSmallForEveryRankIsNotedAndTheNextMeasured) {
  ScriptedCommunicator communicator(2);
  auto options = small_sweep();
  options.collectives = {CollectiveKind::kReduceScatter};
  options.min_bytes = 8;  // 8, 16 and 24 B: under the 16-byte alignment of a rank's share
  options.max_bytes = 40;
  options.step_bytes = 8;
  const auto run = run_engine(options, communicator);

  ASSERT_EQ(run.observer.notes.size(), 1U);  // once for the point, not once per size
  EXPECT_EQ(run.observer.notes[0],
            "reducescatter float 8 B: skipped in some groups (under one element per rank, or more "
            "than 1 GiB per buffer)");
  ASSERT_EQ(run.observer.rows.size(), 2U);
  EXPECT_EQ(run.observer.rows[0].out_of_place.count, 4U);
  EXPECT_EQ(run.observer.rows[1].out_of_place.count, 4U);
}

// A size of one element per rank is measured without a note.
TEST(SweepEnginePlan, OneElementPerRankNeedsNoNote) {
  ScriptedCommunicator communicator(2);
  auto options = small_sweep();
  options.min_bytes = 4;
  options.max_bytes = 4;
  const auto run = run_engine(options, communicator);
  EXPECT_EQ(run.observer.rows.size(), 1U);
  EXPECT_TRUE(run.observer.notes.empty());
}

TEST(SweepEnginePlan, NothingToSweepEndsWithoutRows) {
  ScriptedCommunicator communicator(2);
  auto options = small_sweep();
  options.collectives = {};
  const auto run = run_engine(options, communicator);
  EXPECT_TRUE(run.observer.rows.empty());
  EXPECT_TRUE(run.observer.events.empty());
  EXPECT_EQ(run.outcome.rows, 0);
}

// Buffers are reserved for the largest buffer of any point and size, and a lone rank reserves
// for its own.
TEST(SweepEnginePlan, BuffersAreReservedForTheLargestBufferOfTheSweep) {
  {
    // 4096 B of allgather over 3 ranks holds 340 floats a rank (aligned): 4080 B, under
    // allreduce's 4096.
    ScriptedCommunicator communicator(3);
    auto options = small_sweep();
    options.collectives = {CollectiveKind::kAllGather, CollectiveKind::kAllReduce};
    (void)run_engine(options, communicator);
    EXPECT_THAT(communicator.reserved_bytes, ElementsAre(4096U));
  }
  {
    ScriptedCommunicator communicator(1);
    (void)run_engine(small_sweep(), communicator);
    EXPECT_THAT(communicator.reserved_bytes, ElementsAre(4096U));
  }
  {
    // The last size is the largest.
    ScriptedCommunicator communicator(2);
    auto options = small_sweep();
    options.max_bytes = 8192;
    options.step_bytes = 4096;
    (void)run_engine(options, communicator);
    EXPECT_THAT(communicator.reserved_bytes, ElementsAre(8192U));
  }
}

// An allgather's in-place buffer is the whole output: a size whose output fits the cap exactly
// is measured.
TEST(SweepEnginePlan, AnAllGatherWhoseOutputFitsTheCapExactlyIsMeasured) {
  ScriptedCommunicator communicator(2);
  communicator.buffer_cap_bytes = 8192;
  auto options = small_sweep();
  options.collectives = {CollectiveKind::kAllGather};
  options.min_bytes = 8192;
  options.max_bytes = 8192;
  const auto run = run_engine(options, communicator);
  ASSERT_EQ(run.observer.rows.size(), 1U);
  EXPECT_EQ(run.observer.rows[0].out_of_place.count, 1024U);
  EXPECT_TRUE(run.observer.notes.empty());
  EXPECT_THAT(communicator.reserved_bytes, ElementsAre(8192U));
}

// A sweep whose every size is skipped reserves nothing.
TEST(SweepEnginePlan, NothingMeasuredReservesNothing) {
  ScriptedCommunicator communicator(2);
  auto options = small_sweep();
  options.collectives = {CollectiveKind::kReduceScatter};
  options.min_bytes = 8;
  options.max_bytes = 8;
  const auto run = run_engine(options, communicator);
  EXPECT_TRUE(run.observer.rows.empty());
  EXPECT_THAT(communicator.reserved_bytes, ElementsAre(0U));
}

// A first batch already past the iteration cap (-n above --max-iters) stops there.
TEST(SweepEnginePlan, AFirstBatchPastTheCapStopsAtOnce) {
  ScriptedCommunicator communicator(2);
  communicator.seconds = [](const ScriptedOperation& op) {
    return op.operation % 2 == 0 ? 1.0 : 3.0;
  };
  auto options = small_sweep();
  options.iterations = 20;
  options.target_ci_percent = 0.01;
  options.size_budget_seconds = 1e9;
  options.max_iterations = 10;
  const auto run = run_engine(options, communicator);
  const Measurement& m = run.observer.rows.at(0).out_of_place;
  EXPECT_EQ(m.adaptive->stopped_by, "max_iterations");
  EXPECT_EQ(m.iteration_seconds.size(), 20U);
}

// The data's seed follows --seed and differs from size to size (both placements of a size share
// it: the expected output is computed once per size).
TEST(SweepEnginePlan, TheDataSeedFollowsTheSeedAndTheSize) {
  const auto seeds = [](std::uint64_t seed) {
    ScriptedCommunicator communicator(2);
    auto options = small_sweep();
    options.seed = seed;
    options.max_bytes = 8192;
    options.step_bytes = 4096;
    (void)run_engine(options, communicator);
    std::vector<std::uint64_t> out;
    for (const auto& plan : communicator.plans)
      out.push_back(plan.pattern.seed);
    return out;
  };
  const auto seven = seeds(7);
  ASSERT_EQ(seven.size(), 4U);
  EXPECT_EQ(seven[0], seven[1]);
  EXPECT_EQ(seven[2], seven[3]);
  EXPECT_NE(seven[0], seven[2]);
  const auto eight = seeds(8);
  EXPECT_NE(seven[0], eight[0]);
  EXPECT_NE(seven[2], eight[2]);
}

// One iteration has no confidence interval (it needs two samples): the cap of one stops it.
TEST(SweepEnginePlan, OneIterationHasNoIntervalAndTheCapStopsIt) {
  ScriptedCommunicator communicator(2);
  auto options = small_sweep();
  options.iterations = 1;
  options.target_ci_percent = 1.0;
  options.max_iterations = 1;
  const auto run = run_engine(options, communicator);
  const Measurement& m = run.observer.rows.at(0).out_of_place;
  EXPECT_EQ(m.adaptive->achieved_ci_percent, std::nullopt);
  EXPECT_EQ(m.adaptive->stopped_by, "max_iterations");
}

// -G and -z reach the communicator with every plan.
TEST(SweepEnginePlan, GraphLaunchesAndBlockingReachEveryPlan) {
  ScriptedCommunicator communicator(2);
  auto options = small_sweep();
  options.graph_launches = 3;
  options.blocking = 1;
  (void)run_engine(options, communicator);
  ASSERT_FALSE(communicator.plans.empty());
  for (const auto& plan : communicator.plans) {
    EXPECT_EQ(plan.graph_launches, 3);
    EXPECT_EQ(plan.blocking, 1);
  }
}

// Where two limits hold at once, the first in the rule's order names the stop: the CI target,
// then the budget, then the iteration cap.
TEST(SweepEnginePlan, TheFirstLimitThatHoldsNamesTheStop) {
  {
    ScriptedCommunicator communicator(2);
    auto options = small_sweep();
    options.target_ci_percent = 1.0;
    options.max_iterations = 5;  // reached by the first batch too
    const auto run = run_engine(options, communicator);
    EXPECT_EQ(run.observer.rows.at(0).out_of_place.adaptive->stopped_by, "ci");
  }
  {
    ScriptedCommunicator communicator(2);
    communicator.seconds = [](const ScriptedOperation& op) {
      return op.operation % 2 == 0 ? 1.0 : 3.0;
    };
    auto options = small_sweep();
    options.target_ci_percent = 0.01;
    options.size_budget_seconds = 1.0;
    options.max_iterations = 5;
    const auto run = run_engine(options, communicator);
    EXPECT_EQ(run.observer.rows.at(0).out_of_place.adaptive->stopped_by, "budget");
  }
}

// One timed operation run back to back is a span of one operation.
TEST(SweepEnginePlan, ASingleBackToBackOperationIsItsOwnSpan) {
  ScriptedCommunicator communicator(1);
  communicator.back_to_back = [](int) { return true; };
  communicator.seconds = [](const ScriptedOperation&) { return 2e-3; };
  auto options = small_sweep();
  options.iterations = 1;
  const auto run = run_engine(options, communicator);
  const auto& rank = run.observer.rows.at(0).out_of_place.ranks.at(0);
  ASSERT_TRUE(rank.back_to_back_seconds.has_value());
  EXPECT_DOUBLE_EQ(*rank.back_to_back_seconds, 2e-3);
}

// The size budget counts the time the operations took, from nothing: 6 ms of a 0.5 s budget is
// not spent, and a measurement that reaches its CI target stops for that, budget or not.
TEST(SweepEnginePlan, TheBudgetCountsFromNothingAndTheCiTargetComesFirst) {
  {
    ScriptedCommunicator communicator(1);
    communicator.seconds = [](const ScriptedOperation& op) {
      return op.operation % 2 == 0 ? 1e-3 : 3e-3;
    };
    auto options = small_sweep();
    options.target_ci_percent = 0.01;
    options.size_budget_seconds = 0.5;
    options.max_iterations = 10;
    const auto run = run_engine(options, communicator);
    EXPECT_EQ(run.observer.rows.at(0).out_of_place.adaptive->stopped_by, "max_iterations");
  }
  {
    ScriptedCommunicator communicator(1);
    auto options = small_sweep();
    options.target_ci_percent = 1.0;
    options.size_budget_seconds = 1e-9;  // spent by the first batch
    const auto run = run_engine(options, communicator);
    EXPECT_EQ(run.observer.rows.at(0).out_of_place.adaptive->stopped_by, "ci");
  }
}

// A one-byte size of a one-byte type needs a one-byte buffer, and a lone rank's buffer is held to
// the cap like any other.
TEST(SweepEnginePlan, TheSmallestBufferAndALoneRanksCap) {
  {
    ScriptedCommunicator communicator(2);
    auto options = small_sweep();
    options.types = {DataType::kInt8};
    options.min_bytes = 1;
    options.max_bytes = 1;
    (void)run_engine(options, communicator);
    EXPECT_THAT(communicator.reserved_bytes, ElementsAre(1U));
  }
  {
    ScriptedCommunicator communicator(1);
    communicator.buffer_cap_bytes = 4096;
    auto options = small_sweep();
    options.max_bytes = 8192;
    options.step_bytes = 4096;
    const auto run = run_engine(options, communicator);
    ASSERT_EQ(run.observer.rows.size(), 1U);
    EXPECT_EQ(run.observer.rows[0].out_of_place.bytes, 4096U);
    EXPECT_EQ(run.observer.notes.size(), 1U);
  }
}

// The fault plan reaches the communicator, placed for the round: a link delay inside the
// cluster's one group becomes its rank's delay.
TEST(SweepEnginePlan, TheRoundsFaultsReachEveryOperation) {
  ScriptedCommunicator communicator(2);
  std::vector<std::string> seen;
  communicator.before_run = [&seen](const LoopPlan& plan) {
    seen.push_back(plan.faults ? plan.faults->describe() : "none");
  };
  SingleProcessControlPlane control;
  const FaultPlan faults = parse_fault_plan("corrupt:1,linkdelay:0:1:500");
  const auto options = small_sweep();
  const auto ranks = test_support::one_node(2);
  test_support::RecordingObserver observer;
  SweepEngine engine(options, communicator, control, nullptr, faults, ranks, &observer, false);
  (void)engine.run();
  ASSERT_EQ(seen.size(), 2U);
  for (const auto& described : seen)
    EXPECT_EQ(described, "corrupt:1,delay:0:500");
}

// --- The watchdog ------------------------------------------------------------------------------

// Every exchange between processes is watched, so a process that stops answering ends the job
// at the timeout: the buffer cap, the split of a round, and per placement the support agreement,
// each batch's exchange and the gathering of rank results.
TEST(SweepEnginePlan, EveryExchangeBetweenProcessesIsWatched) {
  for (const Scope scope : {Scope::kCluster, Scope::kNode}) {
    ScriptedCommunicator communicator(2);
    SingleProcessControlPlane control;
    Watchdog watchdog(control, {0, 1}, {0, 0}, 3600.0, [](const TimeoutReport&) {});
    auto options = small_sweep();
    options.scope = scope;
    const FaultPlan no_faults;
    const auto ranks = test_support::one_node(2);
    test_support::RecordingObserver observer;
    SweepEngine engine(options, communicator, control, &watchdog, no_faults, ranks, &observer,
                       false);
    (void)engine.run();
    const std::int64_t expected = 1 + (scope == Scope::kNode ? 1 : 0) + 2 * 3;
    EXPECT_EQ(watchdog.operations_begun(0), expected) << name_of(scope);
    EXPECT_EQ(watchdog.operations_begun(1), expected) << name_of(scope);
  }
}

// What a timeout report says was running: the operation, its size and placement, on process 0
// and on a process measuring a later group (node scope, the second node's process).
TEST(SweepEnginePlanDeathTest, ATimeoutNamesTheOperationThatWasRunning) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto hang_in_the_first_batch = [](int process, Scope scope) {
    const std::vector<int> mine = process == 0 ? std::vector<int>{0, 1} : std::vector<int>{2, 3};
    ScriptedCommunicator communicator(4, mine);
    test_support::ScriptedPeersControlPlane control(process, 2);
    control.peers_max = [](std::span<const double> values) {
      // A process that never answers the first batch's exchange.
      while (values.size() > 1)
        std::this_thread::sleep_for(std::chrono::seconds(1));
      return std::vector<double>(values.begin(), values.end());
    };
    Watchdog watchdog(control, {0, 1}, {0, 0, 1, 1}, 0.2, [](const TimeoutReport& report) {
      std::fprintf(stderr, "context: %s\n", report.context.c_str());
      std::fflush(stderr);
      ::_exit(3);
    });
    const FaultPlan no_faults;
    const auto ranks = test_support::nodes_with_ranks({2, 2});
    auto options = small_sweep();  // the engine keeps a reference
    options.scope = scope;
    SweepEngine engine(options, communicator, control, &watchdog, no_faults, ranks, nullptr, false);
    (void)engine.run();
  };
  EXPECT_EXIT(hang_in_the_first_batch(0, Scope::kCluster), ::testing::ExitedWithCode(3),
              "context: allreduce float sum 4 KiB out-of-place");
  EXPECT_EXIT(hang_in_the_first_batch(1, Scope::kNode), ::testing::ExitedWithCode(3),
              "context: allreduce float sum 4 KiB out-of-place");
}

// A process that sits a round out (its bye) with a watchdog watching: the round goes by without
// it touching a group it is not in.
TEST(SweepEnginePlan, AWatchedProcessSitsItsByeOut) {
  ScriptedCommunicator communicator(3, {0});
  test_support::ScriptedPeersControlPlane control(0, 3);
  Watchdog watchdog(control, {0}, {0, 1, 2}, 3600.0, [](const TimeoutReport&) {});
  const FaultPlan no_faults;
  const auto ranks = test_support::nodes_with_ranks({1, 1, 1});
  auto options = small_sweep();
  options.scope = Scope::kPairs;
  test_support::RecordingObserver observer;
  SweepEngine engine(options, communicator, control, &watchdog, no_faults, ranks, &observer, false);
  const SweepOutcome outcome = engine.run();
  EXPECT_EQ(outcome.rows, 3);
  EXPECT_EQ(communicator.plans.size(), 4U);
}

// --- Progress --------------------------------------------------------------------------------

struct ProgressRun {
  test_support::EngineRun run;
  std::string output;
};

ProgressRun run_with_progress(const SweepOptions& options, ScriptedCommunicator& communicator,
                              int process_index = 0, int process_count = 1) {
  test_support::ScriptedPeersControlPlane control(process_index, process_count);
  ::testing::internal::CaptureStderr();
  ProgressRun out{
      run_engine(options, communicator, control, test_support::one_node(communicator.size()), true),
      ""};
  out.output = ::testing::internal::GetCapturedStderr();
  return out;
}

// The sweep's progress reaches 100 % at its last size and not before (a test runs in well under
// the second between intermediate lines), naming the size and cycle, then says how many rows.
TEST(SweepEnginePlan, ProgressReaches100PercentAtTheLastSizeOfTheLastCycle) {
  ScriptedCommunicator communicator(2);
  auto options = small_sweep();
  options.types = {DataType::kFloat, DataType::kDouble};
  options.min_bytes = 4096;
  options.max_bytes = 3 * 4096;
  options.step_bytes = 4096;
  options.cycles = 2;
  options.iterations = 1;
  const auto progress = run_with_progress(options, communicator);

  const auto lines = progress_lines(progress.output);
  ASSERT_EQ(lines.size(), 1U) << progress.output;
  EXPECT_THAT(lines[0],
              StartsWith("commcert sweep: allreduce double sum 12 KiB (cycle 2) | 100% |"));
  EXPECT_THAT(progress.output, HasSubstr("commcert sweep: 12 rows in "));
}

// With --cycles 0 the first cycle is the whole of the estimate.
TEST(SweepEnginePlan, ProgressOfZeroCyclesReaches100PercentAtTheFirstCyclesEnd) {
  ScriptedCommunicator communicator(2);
  stop_before_timed_batch(communicator, 7);  // the fourth size: the first of the second cycle
  auto options = small_sweep();
  options.min_bytes = 4096;
  options.max_bytes = 3 * 4096;
  options.step_bytes = 4096;
  options.cycles = 0;
  const auto progress = run_with_progress(options, communicator);
  stop_request().store(false);

  const auto lines = progress_lines(progress.output);
  ASSERT_EQ(lines.size(), 2U) << progress.output;
  EXPECT_THAT(lines[0],
              StartsWith("commcert sweep: allreduce float sum 12 KiB (cycle 1) | 100% |"));
  EXPECT_THAT(lines[1], StartsWith("commcert sweep: allreduce float sum 4 KiB (cycle 2) | 100% |"));
}

// Sizes far below the fixed cost per operation still count forward.
TEST(SweepEnginePlan, ProgressOfTinySizesReaches100PercentAtTheLast) {
  ScriptedCommunicator communicator(1);
  auto options = small_sweep();
  options.min_bytes = 4;
  options.max_bytes = 8;
  options.step_bytes = 4;
  const auto progress = run_with_progress(options, communicator);
  const auto lines = progress_lines(progress.output);
  ASSERT_EQ(lines.size(), 1U) << progress.output;
  EXPECT_THAT(lines[0], StartsWith("commcert sweep: allreduce float sum 8 B (cycle 1) | 100% |"));
}

// A rooted collective's progress line names its root.
TEST(SweepEnginePlan, ProgressNamesTheRoot) {
  ScriptedCommunicator communicator(2);
  auto options = small_sweep();
  options.collectives = {CollectiveKind::kBroadcast};
  options.root = 1;
  const auto progress = run_with_progress(options, communicator);
  const auto lines = progress_lines(progress.output);
  ASSERT_EQ(lines.size(), 1U) << progress.output;
  EXPECT_THAT(lines[0], StartsWith("commcert sweep: broadcast float root 1 4 KiB (cycle 1) |"));
}

TEST(SweepEnginePlan, OnlyProcessZeroShowsProgressAndOnlyWhenAsked) {
  ScriptedCommunicator communicator(2);
  const auto progress = run_with_progress(small_sweep(), communicator, 1, 2);
  EXPECT_EQ(progress.output, "");
  ScriptedCommunicator quiet(2);
  test_support::ScriptedPeersControlPlane control(0, 1);
  ::testing::internal::CaptureStderr();
  (void)run_engine(small_sweep(), quiet, control, test_support::one_node(2), false);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace commcert
