// The sweep engine as one process of a larger job (the others scripted on the control plane,
// scripted_control_plane.hpp) and in the scopes that split the job into groups: what the job
// agrees on (the smallest buffer cap, a placement some process cannot run, a stop request, the
// slowest rank's time), the rows of groups this process is not in, a process that sits a round
// out, and the notes a user reads per round.
#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bench/rank_result_wire.hpp"
#include "bench/sweep_engine.hpp"
#include "core/stop_request.hpp"
#include "scripted_communicator.hpp"
#include "scripted_control_plane.hpp"
#include "sweep_engine_support.hpp"

namespace commcert {
namespace {

using test_support::nodes_with_ranks;
using test_support::run_engine;
using test_support::ScriptedCommunicator;
using test_support::ScriptedPeersControlPlane;
using test_support::small_sweep;
using ::testing::ElementsAre;
using ::testing::StartsWith;

std::vector<int> ranks_of(const Measurement& m) {
  std::vector<int> out;
  for (const auto& entry : m.ranks)
    out.push_back(entry.rank);
  return out;
}

// What another process sends process 0: its ranks' results, each `mean` seconds.
std::vector<double> results_of(const std::vector<int>& ranks, double mean) {
  std::vector<RankMeasurement> results;
  for (const int rank : ranks) {
    RankMeasurement r;
    r.rank = rank;
    r.mean_seconds = mean;
    r.checked = true;
    results.push_back(r);
  }
  return encode_rank_results(results);
}

// Peers that bring `seconds` for every iteration of group `group` (of `groups`) in each batch's
// exchange, and nothing else.
std::function<std::vector<double>(std::span<const double>)> peers_timing_group(
    int group, int groups, std::function<double(std::size_t iteration)> seconds) {
  return [=](std::span<const double> mine) {
    std::vector<double> theirs(mine.begin(), mine.end());
    if (mine.size() < 2) return theirs;  // the cap and the support agreements: as here
    const std::size_t iterations = (mine.size() - 1) / static_cast<std::size_t>(groups);
    for (std::size_t i = 0; i < iterations; ++i)
      theirs[static_cast<std::size_t>(group) * iterations + i] = seconds(i);
    return theirs;
  };
}

// Peers whose first batch brings a stop request (the last value of the exchange).
std::vector<double> peers_asking_to_stop(std::span<const double> mine) {
  std::vector<double> theirs(mine.begin(), mine.end());
  if (mine.size() > 1) theirs.back() = 1.0;
  return theirs;
}

// --- One process of a cluster-wide job ------------------------------------------------------

// Every rank must skip the same sizes: another process's smaller cap applies here too.
TEST(SweepEngineJob, TheSmallestBufferCapInTheJobApplies) {
  ScriptedCommunicator communicator(4, {0, 1});
  communicator.buffer_cap_bytes = 8192;
  ScriptedPeersControlPlane control(0, 2);
  control.peers_max = [](std::span<const double> mine) {
    std::vector<double> theirs(mine.begin(), mine.end());
    if (mine.size() == 1 && mine[0] < 0) theirs[0] = -4096.0;  // the other process's cap
    return theirs;
  };
  auto options = small_sweep();
  options.max_bytes = 8192;
  options.step_bytes = 4096;
  const auto run = run_engine(options, communicator, control, nodes_with_ranks({2, 2}));

  ASSERT_EQ(run.observer.rows.size(), 1U);
  EXPECT_EQ(run.observer.rows[0].out_of_place.bytes, 4096U);
  ASSERT_FALSE(control.all_reduce_lengths.empty());
  EXPECT_EQ(control.all_reduce_lengths[0], 1U);
  EXPECT_THAT(communicator.reserved_bytes, ElementsAre(4096U));
}

// A placement another process cannot run is skipped by all, with the job-wide reason.
TEST(SweepEngineJob, APlacementAnotherProcessCannotRunIsSkippedEverywhere) {
  ScriptedCommunicator communicator(4, {0, 1});
  ScriptedPeersControlPlane control(0, 2);
  control.peers_max = [](std::span<const double> mine) {
    std::vector<double> theirs(mine.begin(), mine.end());
    if (mine.size() == 1 && mine[0] >= 0) theirs[0] = 1.0;  // unsupported over there
    return theirs;
  };
  const auto run = run_engine(small_sweep(), communicator, control, nodes_with_ranks({2, 2}));

  ASSERT_EQ(run.observer.rows.size(), 1U);
  EXPECT_EQ(run.observer.rows[0].out_of_place.unsupported, "not supported on some of the ranks");
  EXPECT_EQ(run.observer.rows[0].in_place.unsupported, "not supported on some of the ranks");
  EXPECT_TRUE(communicator.plans.empty());
}

// A stop request on another process ends this one after the same row.
TEST(SweepEngineJob, AStopRequestOnAnotherProcessStopsThisOne) {
  ScriptedCommunicator communicator(4, {0, 1});
  ScriptedPeersControlPlane control(0, 2);
  control.peers_max = peers_asking_to_stop;
  auto options = small_sweep();
  options.max_bytes = 3 * 4096;
  options.step_bytes = 4096;
  const auto run = run_engine(options, communicator, control, nodes_with_ranks({2, 2}));
  EXPECT_TRUE(run.outcome.interrupted);
  EXPECT_EQ(run.observer.rows.size(), 1U);
}

// The iteration's time is the slowest rank's of the whole job, and process 0 reports every
// process's ranks, in rank order.
TEST(SweepEngineJob, ProcessZeroReportsTheSlowestRankOfTheJobAndEveryRank) {
  ScriptedCommunicator communicator(4, {0, 1});
  ScriptedPeersControlPlane control(0, 2);
  control.peers_max = peers_timing_group(0, 1, [](std::size_t) { return 0.25; });
  control.peers_gathered = [] {
    return std::vector<std::vector<double>>{results_of({2, 3}, 0.25)};
  };
  const auto run = run_engine(small_sweep(), communicator, control, nodes_with_ranks({2, 2}));

  const Measurement& m = run.observer.rows.at(0).out_of_place;
  EXPECT_THAT(m.iteration_seconds, ElementsAre(0.25, 0.25, 0.25, 0.25, 0.25));
  EXPECT_THAT(ranks_of(m), ElementsAre(0, 1, 2, 3));
  EXPECT_DOUBLE_EQ(m.ranks[2].mean_seconds, 0.25);
}

// --- Node scope: a group per node -----------------------------------------------------------

// Process 0 drives node0's ranks; node1's group is measured by process 1 at the same time, and
// process 0 reports its rows from the exchange.
TEST(SweepEngineJob, NodeScopeReportsEveryNodesGroupFromTheOneProcessThatWritesRecords) {
  ScriptedCommunicator communicator(4, {0, 1});
  ScriptedPeersControlPlane control(0, 2);
  control.peers_max =
      peers_timing_group(1, 2, [](std::size_t i) { return 1.0 + static_cast<double>(i); });
  control.peers_gathered = [] { return std::vector<std::vector<double>>{results_of({2, 3}, 3.0)}; };
  auto options = small_sweep();
  options.scope = Scope::kNode;
  const auto run = run_engine(options, communicator, control, nodes_with_ranks({2, 2}));

  EXPECT_THAT(communicator.splits, ElementsAre(ElementsAre(0, 0)));
  ASSERT_EQ(run.observer.rows.size(), 2U);
  EXPECT_EQ(run.outcome.rows, 2);
  for (std::size_t g = 0; g < 2; ++g) {
    const Measurement& m = run.observer.rows[g].out_of_place;
    EXPECT_EQ(m.scope, "node");
    EXPECT_EQ(m.group, static_cast<int>(g));
    EXPECT_THAT(m.group_nodes, ElementsAre("node" + std::to_string(g)));
    EXPECT_EQ(m.nranks, 2);
    EXPECT_EQ(m.count, 1024U);
  }
  EXPECT_THAT(run.observer.rows[0].out_of_place.iteration_seconds,
              ElementsAre(1e-3, 1e-3, 1e-3, 1e-3, 1e-3));
  EXPECT_THAT(run.observer.rows[1].out_of_place.iteration_seconds,
              ElementsAre(1.0, 2.0, 3.0, 4.0, 5.0));
  EXPECT_THAT(ranks_of(run.observer.rows[0].out_of_place), ElementsAre(0, 1));
  EXPECT_THAT(ranks_of(run.observer.rows[1].out_of_place), ElementsAre(2, 3));
  // This process ran its own group only, in a communicator of its node's two ranks.
  ASSERT_EQ(communicator.plans.size(), 2U);
  for (const auto& plan : communicator.plans)
    EXPECT_EQ(plan.pattern.nranks, 2);
}

// The adaptive rule waits for every group: one whose times never settle keeps all measuring.
TEST(SweepEngineJob, EveryGroupMustReachTheCiTarget) {
  ScriptedCommunicator communicator(4, {0, 1});
  ScriptedPeersControlPlane control(0, 2);
  control.peers_max =
      peers_timing_group(1, 2, [](std::size_t i) { return i % 2 == 0 ? 1.0 : 3.0; });
  auto options = small_sweep();
  options.scope = Scope::kNode;
  options.target_ci_percent = 1.0;
  options.size_budget_seconds = 1e9;
  options.max_iterations = 10;
  const auto run = run_engine(options, communicator, control, nodes_with_ranks({2, 2}));

  const Measurement& steady = run.observer.rows.at(0).out_of_place;
  EXPECT_EQ(steady.adaptive->stopped_by, "max_iterations");
  EXPECT_EQ(steady.iteration_seconds.size(), 10U);
}

// Process 1 measures node1's group: it runs, in a communicator of two ranks, with buffers for
// its own size.
TEST(SweepEngineJob, AProcessInAGroupAfterTheFirstRunsItsGroup) {
  ScriptedCommunicator communicator(4, {2, 3});
  ScriptedPeersControlPlane control(1, 2);
  auto options = small_sweep();
  options.scope = Scope::kNode;
  const auto run = run_engine(options, communicator, control, nodes_with_ranks({2, 2}));

  // Its times go to its group's place in the exchange: its rows carry them.
  ASSERT_EQ(run.observer.rows.size(), 2U);
  EXPECT_THAT(run.observer.rows[1].out_of_place.iteration_seconds,
              ElementsAre(1e-3, 1e-3, 1e-3, 1e-3, 1e-3));
  EXPECT_THAT(run.observer.rows[0].out_of_place.iteration_seconds,
              ElementsAre(0.0, 0.0, 0.0, 0.0, 0.0));
  EXPECT_THAT(communicator.splits, ElementsAre(ElementsAre(1, 1)));
  ASSERT_EQ(communicator.plans.size(), 2U);
  for (const auto& plan : communicator.plans)
    EXPECT_EQ(plan.pattern.nranks, 2);
  EXPECT_THAT(communicator.reserved_bytes, ElementsAre(4096U));
}

// A root outside a group's ranks is the group's rank 0.
TEST(SweepEngineJob, ARootBeyondTheGroupIsTheGroupsFirstRank) {
  auto options = small_sweep();
  options.scope = Scope::kNode;
  options.collectives = {CollectiveKind::kBroadcast};
  for (const int root : {2, 3}) {  // the group's size, and beyond it
    ScriptedCommunicator communicator(4, {0, 1});
    ScriptedPeersControlPlane control(0, 2);
    options.root = root;
    const auto run = run_engine(options, communicator, control, nodes_with_ranks({2, 2}));

    ASSERT_EQ(run.observer.rows.size(), 2U) << root;
    for (const auto& row : run.observer.rows)
      EXPECT_EQ(row.out_of_place.root, 0) << root;
    for (const auto& plan : communicator.plans)
      EXPECT_EQ(plan.pattern.root, 0) << root;
  }
}

// --- Pairs scope: rounds, and a process that sits one out ------------------------------------

// Three nodes pair up in three rounds, each with a bye. In the round where node0 (this process)
// has it, nothing runs here, yet the round's pair is still reported; each round is noted.
TEST(SweepEngineJob, PairsScopeRunsEveryRoundAndSitsOutItsBye) {
  ScriptedCommunicator communicator(3, {0});
  ScriptedPeersControlPlane control(0, 3);
  auto options = small_sweep();
  options.scope = Scope::kPairs;
  options.iterations = 1;
  ::testing::internal::CaptureStderr();
  const auto run = run_engine(options, communicator, control, nodes_with_ranks({1, 1, 1}),
                              /*show_progress=*/true);
  const std::string progress = ::testing::internal::GetCapturedStderr();

  EXPECT_EQ(communicator.splits.size(), 3U);
  EXPECT_EQ(communicator.reserved_bytes.size(), 2U);  // no buffers in the round it sits out
  EXPECT_EQ(communicator.plans.size(), 4U);           // two placements in each of two rounds
  ASSERT_EQ(run.observer.rows.size(), 3U);
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(run.observer.rows[r].out_of_place.round, static_cast<int>(r));
    EXPECT_EQ(run.observer.rows[r].out_of_place.scope, "pairs");
    EXPECT_EQ(run.observer.rows[r].out_of_place.group_nodes.size(), 2U);
  }
  EXPECT_THAT(run.observer.notes,
              ElementsAre("pairs round 1 of 3: 1 pair(s)", "pairs round 2 of 3: 1 pair(s)",
                          "pairs round 3 of 3: 1 pair(s)"));
  // One line at 100 %, at the end of the last round.
  EXPECT_EQ(progress.find("100%"), progress.rfind("100%")) << progress;
  EXPECT_NE(progress.find("100%"), std::string::npos) << progress;
}

// A stop request ends the sweep before the next round: no split, no buffers for it.
TEST(SweepEngineJob, AStopRequestEndsThePairsBeforeTheNextRound) {
  ScriptedCommunicator communicator(3, {0});
  ScriptedPeersControlPlane control(0, 3);
  control.peers_max = peers_asking_to_stop;
  auto options = small_sweep();
  options.scope = Scope::kPairs;
  const auto run = run_engine(options, communicator, control, nodes_with_ranks({1, 1, 1}));

  EXPECT_TRUE(run.outcome.interrupted);
  EXPECT_EQ(communicator.splits.size(), 1U);
  EXPECT_EQ(run.observer.rows.size(), 1U);
}

TEST(SweepEngineJob, ARowOfANamedPairSaysSo) {
  ScriptedCommunicator communicator(2, {0});
  ScriptedPeersControlPlane control(0, 2);
  auto options = small_sweep();
  options.scope = Scope::kPairs;
  options.pair_list = {{"node0", "node1"}};
  const auto run = run_engine(options, communicator, control, nodes_with_ranks({1, 1}));
  ASSERT_EQ(run.observer.rows.size(), 1U);
  EXPECT_TRUE(run.observer.rows[0].out_of_place.pair_list);
}

// --- Groups scope ----------------------------------------------------------------------------

// Groups of two nodes and of one (a rank each), and a 16-byte allgather: two floats a rank in
// the group of two, under the 16-byte alignment of a rank's share, so only the lone node's group
// measures it. Round `round`.
SweepOptions uneven_groups_sweep(int round) {
  auto options = small_sweep();
  options.scope = Scope::kGroups;
  options.node_groups = {{{"node0", "node1"}, {"node2"}}, round};
  options.collectives = {CollectiveKind::kAllGather};
  options.min_bytes = 16;
  options.max_bytes = 16;
  return options;
}

// Groups of different sizes: a size too small for the larger group is measured in the smaller
// one alone, noted once; the round carries the number --groups gave it.
TEST(SweepEngineJob, GroupsScopeMeasuresEachGroupThatHoldsTheSize) {
  ScriptedCommunicator communicator(3, {2});
  ScriptedPeersControlPlane control(2, 3);
  const auto options = uneven_groups_sweep(4);
  const auto run = run_engine(options, communicator, control, nodes_with_ranks({1, 1, 1}));

  ASSERT_EQ(run.observer.notes.size(), 2U);
  EXPECT_EQ(run.observer.notes[0], "groups round 5: 2 group(s)");
  EXPECT_THAT(run.observer.notes[1], StartsWith("allgather float 16 B: skipped in some groups"));
  ASSERT_EQ(run.observer.rows.size(), 1U);
  const Measurement& m = run.observer.rows[0].out_of_place;
  EXPECT_EQ(m.group, 1);
  EXPECT_EQ(m.round, 4);
  EXPECT_EQ(m.scope, "groups");
  EXPECT_THAT(m.group_nodes, ElementsAre("node2"));
  EXPECT_EQ(run.outcome.rows, 1);
}

// A process whose group skips the size runs nothing for it, yet takes part in the agreements.
TEST(SweepEngineJob, AProcessWhoseGroupSkipsTheSizeRunsNothing) {
  ScriptedCommunicator communicator(3, {0});
  ScriptedPeersControlPlane control(0, 3);
  const auto options = uneven_groups_sweep(0);
  const auto run = run_engine(options, communicator, control, nodes_with_ranks({1, 1, 1}));

  EXPECT_TRUE(communicator.plans.empty());
  ASSERT_EQ(run.observer.rows.size(), 1U);
  EXPECT_EQ(run.observer.rows[0].out_of_place.group, 1);
}

// A group that skips the size has no interval to reach: the others' steady times stop at the
// CI target after the first batch.
TEST(SweepEngineJob, AGroupThatSkipsTheSizeDoesNotHoldBackTheCiTarget) {
  ScriptedCommunicator communicator(3, {2});
  ScriptedPeersControlPlane control(2, 3);
  auto options = uneven_groups_sweep(0);
  options.target_ci_percent = 1.0;
  const auto run = run_engine(options, communicator, control, nodes_with_ranks({1, 1, 1}));
  const Measurement& m = run.observer.rows.at(0).out_of_place;
  EXPECT_EQ(m.adaptive->stopped_by, "ci");
  EXPECT_EQ(m.iteration_seconds.size(), 5U);
}

// Processes other than 0 run without an observer.
TEST(SweepEngineJob, AProcessWithoutAnObserverRunsEveryScope) {
  for (const Scope scope : {Scope::kNode, Scope::kPairs, Scope::kGroups}) {
    ScriptedCommunicator communicator(2, {1});
    ScriptedPeersControlPlane control(1, 2);
    auto options = small_sweep();
    options.scope = scope;
    options.node_groups = {{{"node0"}, {"node1"}}, 0};
    options.min_bytes = 2;  // under a float: skipped, with nobody to note it to
    options.step_bytes = 4094;
    const FaultPlan no_faults;
    const auto ranks = nodes_with_ranks({1, 1});
    SweepEngine engine(options, communicator, control, nullptr, no_faults, ranks, nullptr, false);
    const SweepOutcome outcome = engine.run();
    EXPECT_EQ(communicator.plans.size(), 2U) << name_of(scope);
    EXPECT_FALSE(outcome.interrupted);
  }
}

}  // namespace
}  // namespace commcert
