#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cli/sweep_command.hpp"
#include "comm/abort_signal.hpp"
#include "comm/control_plane.hpp"
#include "comm/watchdog.hpp"
#include "core/json.hpp"
#include "core/run_output.hpp"
#include "scripted_communicator.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

constexpr double kTimeout = 10.0;
// Idle long enough to count as absent (at least half the timeout), and a momentary gap.
constexpr double kLongIdle = 9.0;
constexpr double kMomentary = 0.001;

// A rank whose process answered: `begun` operations, inside one or not, idle for `idle_seconds`
// since its last begin or end (what Watchdog::own_notice reports).
RankTimeoutState state(int rank, std::int64_t begun, bool inside, double idle_seconds = kLongIdle) {
  RankTimeoutState s;
  s.rank = rank;
  s.responded = true;
  s.operations_begun = begun;
  s.inside_operation = inside;
  s.idle_seconds = idle_seconds;
  return s;
}

// A rank whose process never answered, exactly as the protocol leaves it: nothing is known of
// it, so it has no idle time and is not "absent"; only the did-not-respond rule can name it.
RankTimeoutState silent(int rank) {
  return rank_states_from_answers(static_cast<std::size_t>(rank) + 1, {}).back();
}

std::vector<int> one_rank_per_process(int n) {
  std::vector<int> process(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r)
    process[static_cast<std::size_t>(r)] = r;
  return process;
}

TEST(AttributeTimeout, EveryRankInsideTheSameOperationBlamesNoRank) {
  // All four ranks began operation 7 and wait inside it: the operation itself is stuck.
  const auto report = attribute_timeout(
      {state(0, 7, true), state(1, 7, true), state(2, 7, true), state(3, 7, true)},
      one_rank_per_process(4), 0, kTimeout);
  EXPECT_TRUE(report.culprit_ranks.empty());
  EXPECT_EQ(report.ranks.size(), 4u);
  EXPECT_TRUE(report.this_process_reports);
  EXPECT_TRUE(report.attributed);
}

TEST(AttributeTimeout, ARankThatNeverArrivedIsTheCulprit) {
  // Rank 2 finished operation 6 and never began operation 7, which the others wait in.
  const auto report = attribute_timeout(
      {state(0, 7, true), state(1, 7, true), state(2, 6, false), state(3, 7, true)},
      one_rank_per_process(4), 0, kTimeout);
  EXPECT_EQ(report.culprit_ranks, std::vector<int>{2});
}

TEST(AttributeTimeout, ARankWaitingInsideAnOperationIsAVictimWhicheverOperationItIs) {
  // Rank 1 is stuck inside operation 6 while the others wait in 7: it waits on someone too (a
  // broadcast routed through a stuck rank leaves that rank's subtree one operation behind).
  // Nobody is absent, so no rank is blamed; nor when rank 1 is ahead of the others instead.
  for (const std::int64_t rank_1_begun : {6, 7, 8}) {
    const auto report =
        attribute_timeout({state(0, 7, true), state(1, rank_1_begun, true), state(2, 7, true)},
                          one_rank_per_process(3), 0, kTimeout);
    EXPECT_TRUE(report.culprit_ranks.empty()) << rank_1_begun;
  }
}

TEST(AttributeTimeout, AFrozenRankIsBlamedNotTheSubtreeWaitingOnIt) {
  // The case found with SIGSTOP: rank 1 is frozen (silent), rank 3 receives a broadcast through
  // rank 1 and is still inside it while ranks 0 and 2 moved on to the next operation.
  const auto report =
      attribute_timeout({state(0, 3, true), silent(1), state(2, 3, true), state(3, 2, true)},
                        one_rank_per_process(4), 0, kTimeout);
  EXPECT_EQ(report.culprit_ranks, std::vector<int>{1});
}

TEST(AttributeTimeout, ARankMomentarilyBetweenOperationsIsNotBlamed) {
  // Rank 2 had just finished an operation when it was asked: it is making progress.
  const auto report =
      attribute_timeout({state(0, 5, true), state(1, 5, true), state(2, 5, false, kMomentary)},
                        one_rank_per_process(3), 0, kTimeout);
  EXPECT_TRUE(report.culprit_ranks.empty());
}

TEST(AttributeTimeout, AbsenceIsJudgedAgainstHalfTheTimeout) {
  const auto absent_for = [](double idle) {
    return attribute_timeout({state(0, 4, true), state(1, 3, false, idle)}, one_rank_per_process(2),
                             0, kTimeout)
        .culprit_ranks;
  };
  EXPECT_TRUE(absent_for(kTimeout / 2 - 0.01).empty());
  EXPECT_EQ(absent_for(kTimeout / 2), std::vector<int>{1});
}

TEST(AttributeTimeout, ARankThatDidNotRespondIsACulprit) {
  // Rank 3's process did not answer within the grace period; the others wait in the same
  // operation. Nothing is known about rank 3, so it is the one to blame.
  const auto report =
      attribute_timeout({state(0, 7, true), state(1, 7, true), state(2, 7, true), silent(3)},
                        one_rank_per_process(4), 0, kTimeout);
  EXPECT_EQ(report.culprit_ranks, std::vector<int>{3});
  EXPECT_FALSE(report.ranks[3].responded);
}

TEST(AttributeTimeout, SilentAndLateRanksAreBothCulpritsInRankOrder) {
  const auto report =
      attribute_timeout({silent(0), state(1, 9, true), state(2, 8, false), state(3, 9, true)},
                        one_rank_per_process(4), 1, kTimeout);
  EXPECT_EQ(report.culprit_ranks, (std::vector<int>{0, 2}));
}

TEST(AttributeTimeout, AnAbsentRankIsBlamedNotTheRankStuckWaitingOnIt) {
  // A hang propagates: rank 3 never began operation 10; rank 2, which waits on rank 3, is stuck
  // inside 10; ranks 0 and 1 already moved on to 11. Rank 2 is further behind than 0 and 1 but
  // inside an operation, a victim: only rank 3, outside any operation, is to blame.
  const auto report = attribute_timeout(
      {state(0, 11, true), state(1, 11, true), state(2, 10, true), state(3, 9, false)},
      one_rank_per_process(4), 0, kTimeout);
  EXPECT_EQ(report.culprit_ranks, std::vector<int>{3});
}

TEST(AttributeTimeout, OperationNumbersDoNotDecideBlame) {
  // Blame follows where a rank is (absent, silent, inside), not how far it got: the same states
  // with the operation counts shuffled among the ranks name the same culprits. The rank furthest
  // ahead is blamed when it is the absent one (it finished its last operation and hung after it).
  const std::vector<std::int64_t> counts = {7, 12, 7, 3};
  std::vector<std::int64_t> shuffled = counts;
  std::sort(shuffled.begin(), shuffled.end());
  do {
    const auto report =
        attribute_timeout({state(0, shuffled[0], true), state(1, shuffled[1], false),
                           state(2, shuffled[2], true), silent(3)},
                          one_rank_per_process(4), 0, kTimeout);
    EXPECT_EQ(report.culprit_ranks, (std::vector<int>{1, 3}));
  } while (std::next_permutation(shuffled.begin(), shuffled.end()));
  EXPECT_EQ(attribute_timeout({state(0, 7, true), state(1, 12, false), state(2, 7, true)},
                              one_rank_per_process(3), 0, kTimeout)
                .culprit_ranks,
            std::vector<int>{1});
}

TEST(AttributeTimeout, SendRecvRingBlamesTheAbsentRankNotThoseAheadOrBehindIt) {
  // sendrecv ring (send to r+1, receive from r-1), rank 2 hangs before its 6th operation:
  //  - rank 3 receives from rank 2: stuck inside operation 6;
  //  - rank 0 receives from rank 3, which sent in operation 6: rank 0 completed 6 and waits
  //    inside 7 (rank 3 never sends its 7th message);
  //  - rank 1 receives from rank 0 (sent in 6 and 7), its sends to rank 2 are buffered: it
  //    completed 7 and waits inside 8.
  // Being ahead is no fault; rank 3 waiting on rank 2 is no fault either. Only rank 2 is.
  const auto report = attribute_timeout(
      {state(0, 7, true), state(1, 8, true), state(2, 5, false), state(3, 6, true)},
      one_rank_per_process(4), 0, kTimeout);
  EXPECT_EQ(report.culprit_ranks, std::vector<int>{2});
}

TEST(AttributeTimeout, SendRecvRingStuckLinkWithEveryRankInside) {
  // The same ring with every rank inside operation 6 (a link that dropped a message): no rank
  // is missing, so none is blamed.
  const auto report = attribute_timeout(
      {state(0, 6, true), state(1, 6, true), state(2, 6, true), state(3, 6, true)},
      one_rank_per_process(4), 2, kTimeout);
  EXPECT_TRUE(report.culprit_ranks.empty());
}

TEST(AttributeTimeout, ReporterIsTheLowestAnsweringProcess) {
  // Two processes with two ranks each.
  const std::vector<int> process_of_rank = {0, 0, 1, 1};
  const std::vector<RankTimeoutState> all_answer = {state(0, 3, true), state(1, 3, true),
                                                    state(2, 3, true), state(3, 3, true)};
  EXPECT_TRUE(attribute_timeout(all_answer, process_of_rank, 0, kTimeout).this_process_reports);
  EXPECT_FALSE(attribute_timeout(all_answer, process_of_rank, 1, kTimeout).this_process_reports);

  // Process 0 is gone: process 1 writes the record.
  const std::vector<RankTimeoutState> first_silent = {silent(0), silent(1), state(2, 3, true),
                                                      state(3, 3, true)};
  const auto seen_by_1 = attribute_timeout(first_silent, process_of_rank, 1, kTimeout);
  EXPECT_TRUE(seen_by_1.this_process_reports);
  EXPECT_EQ(seen_by_1.culprit_ranks, (std::vector<int>{0, 1}));
  EXPECT_FALSE(attribute_timeout(first_silent, process_of_rank, 0, kTimeout).this_process_reports);
}

TEST(AttributeTimeout, ReporterFollowsProcessNumbersNotRankNumbers) {
  // Ranks map to processes in reverse: rank 0 lives in process 1. Process 0 (rank 1) answers.
  const std::vector<int> process_of_rank = {1, 0};
  const std::vector<RankTimeoutState> ranks = {state(0, 2, true), state(1, 2, true)};
  EXPECT_TRUE(attribute_timeout(ranks, process_of_rank, 0, kTimeout).this_process_reports);
  EXPECT_FALSE(attribute_timeout(ranks, process_of_rank, 1, kTimeout).this_process_reports);
}

// Which processes write the record: exactly one, the lowest that answered, seen from each.
std::vector<int> reporting_processes(const std::vector<RankTimeoutState>& ranks,
                                     const std::vector<int>& process_of_rank, int processes) {
  std::vector<int> reporting;
  for (int process = 0; process < processes; ++process) {
    if (attribute_timeout(ranks, process_of_rank, process, kTimeout).this_process_reports) {
      reporting.push_back(process);
    }
  }
  return reporting;
}

TEST(AttributeTimeout, OneRecordIsWrittenByTheLowestAnsweringProcessWhicheverThatIs) {
  // Three processes, one rank each. Whichever processes are silent, the lowest one that
  // answered writes the record and no other: a later answering process taking over would write
  // a second record, and nobody writing it would lose the timeout.
  const auto answering = [](int rank) { return state(rank, 5, true); };
  EXPECT_EQ(
      reporting_processes({answering(0), answering(1), answering(2)}, one_rank_per_process(3), 3),
      std::vector<int>{0});
  EXPECT_EQ(
      reporting_processes({silent(0), answering(1), answering(2)}, one_rank_per_process(3), 3),
      std::vector<int>{1});
  EXPECT_EQ(reporting_processes({silent(0), silent(1), answering(2)}, one_rank_per_process(3), 3),
            std::vector<int>{2});
  EXPECT_EQ(
      reporting_processes({answering(0), silent(1), answering(2)}, one_rank_per_process(3), 3),
      std::vector<int>{0});
  // Ranks listed in another order than their processes': process 2 holds rank 0.
  EXPECT_EQ(reporting_processes({answering(0), silent(1), answering(2)}, {2, 0, 1}, 3),
            std::vector<int>{1});
}

TEST(DeclaredAfterPeersGathered, OnlyAProcessThatMissedThePeersGracePeriodStandsDown) {
  constexpr double kGrace = 2.0;
  constexpr std::int64_t kOwn = 1'000'000'000'000;
  constexpr std::int64_t kGraceNs = 2'000'000'000;
  // Peers that declared at about the same time (a peer's notice woke this one): it takes part.
  EXPECT_FALSE(declared_after_peers_gathered(kOwn, {kOwn - 20'000'000, kOwn + 5'000}, kGrace));
  // At the grace period and one step either side.
  EXPECT_FALSE(declared_after_peers_gathered(kOwn, {kOwn - kGraceNs + 1}, kGrace));
  EXPECT_FALSE(declared_after_peers_gathered(kOwn, {kOwn - kGraceNs}, kGrace));
  EXPECT_TRUE(declared_after_peers_gathered(kOwn, {kOwn - kGraceNs - 1}, kGrace));
  // One early peer among punctual ones is enough: it gathered answers without this process.
  EXPECT_TRUE(declared_after_peers_gathered(kOwn, {kOwn, kOwn - 30 * kGraceNs}, kGrace));
  // Alone, or only later peers: its own deadline, its own record.
  EXPECT_FALSE(declared_after_peers_gathered(kOwn, {}, kGrace));
  EXPECT_FALSE(declared_after_peers_gathered(kOwn, {kOwn + 60 * kGraceNs}, kGrace));
}

TEST(RankStatesFromAnswers, ReadsEachAnswerAndLeavesUnansweredRanksUnknown) {
  // Process 0 answered for ranks 0 and 1; process 1 (ranks 2 and 3) did not answer.
  const std::map<int, std::vector<std::int64_t>> answers = {
      {0, {1'000, 0, 5, 1, 2'000'000'000, 1, 4, 0, 6'500'000'000}}};
  const auto ranks = rank_states_from_answers(4, answers);
  ASSERT_EQ(ranks.size(), 4u);
  EXPECT_TRUE(ranks[0].responded);
  EXPECT_EQ(ranks[0].operations_begun, 5);
  EXPECT_TRUE(ranks[0].inside_operation);
  EXPECT_DOUBLE_EQ(ranks[0].idle_seconds, 2.0);
  EXPECT_TRUE(ranks[1].responded);
  EXPECT_EQ(ranks[1].operations_begun, 4);
  EXPECT_FALSE(ranks[1].inside_operation);
  EXPECT_DOUBLE_EQ(ranks[1].idle_seconds, 6.5);
  for (const int rank : {2, 3}) {
    const auto& unknown = ranks[static_cast<std::size_t>(rank)];
    EXPECT_EQ(unknown.rank, rank);
    EXPECT_FALSE(unknown.responded);
    EXPECT_EQ(unknown.operations_begun, 0);
    EXPECT_FALSE(unknown.inside_operation);
    EXPECT_EQ(unknown.idle_seconds, 0.0);
  }
  // So only the did-not-respond rule names them: rank 1 is absent, 2 and 3 are silent.
  EXPECT_EQ(attribute_timeout(ranks, {0, 0, 1, 1}, 0, kTimeout).culprit_ranks,
            (std::vector<int>{1, 2, 3}));
}

TEST(RankStatesFromAnswers, IgnoresRanksBeyondTheJobAndTruncatedEntries) {
  const std::map<int, std::vector<std::int64_t>> answers = {{0, {1, 7, 3, 1, 0, 0, 2, 1}}, {1, {}}};
  const auto ranks = rank_states_from_answers(2, answers);
  EXPECT_FALSE(ranks[0].responded);  // its entry lacks the idle time
  EXPECT_FALSE(ranks[1].responded);
}

TEST(RankStatesFromAnswers, ReadsTheAnswersOfEveryProcess) {
  // Three processes answered, one rank each: every answer counts, not only the first process's
  // (a rank whose answer was dropped would be blamed as silent).
  const std::map<int, std::vector<std::int64_t>> answers = {{0, {1'000, 0, 8, 1, 1'000'000'000}},
                                                            {1, {1'001, 1, 8, 1, 2'000'000'000}},
                                                            {2, {1'002, 2, 7, 0, 7'000'000'000}}};
  const auto ranks = rank_states_from_answers(3, answers);
  for (const int rank : {0, 1, 2})
    EXPECT_TRUE(ranks[static_cast<std::size_t>(rank)].responded) << rank;
  EXPECT_EQ(ranks[2].operations_begun, 7);
  EXPECT_FALSE(ranks[2].inside_operation);
  EXPECT_DOUBLE_EQ(ranks[2].idle_seconds, 7.0);
  EXPECT_DOUBLE_EQ(ranks[1].idle_seconds, 2.0);
  // Rank 2 has been out of every operation for 7 s of a 10 s timeout: it alone is to blame.
  EXPECT_EQ(attribute_timeout(ranks, one_rank_per_process(3), 0, kTimeout).culprit_ranks,
            std::vector<int>{2});
}

TEST(RankStatesFromAnswers, ARankOutsideTheJobIsIgnoredFromTheJobSizeOn) {
  // A three-rank job: rank 2 is the last of it and is read; rank 3 (the job's size), rank 4 and
  // far larger or negative ranks come from a notice that does not belong to this job and must
  // change nothing, in particular not be written past the end of the states.
  const std::map<int, std::vector<std::int64_t>> answers = {
      {0, {1'000, 3, 9, 1,  0, 2, 6, 1, 3'000'000'000, 4, 9, 1, 0, std::int64_t{1} << 40,
           9,     1, 0, -1, 9, 1, 0}}};
  const auto ranks = rank_states_from_answers(3, answers);
  ASSERT_EQ(ranks.size(), 3u);
  EXPECT_TRUE(ranks[2].responded);
  EXPECT_EQ(ranks[2].operations_begun, 6);
  EXPECT_DOUBLE_EQ(ranks[2].idle_seconds, 3.0);
  for (const int rank : {0, 1}) {
    EXPECT_FALSE(ranks[static_cast<std::size_t>(rank)].responded) << rank;
    EXPECT_EQ(ranks[static_cast<std::size_t>(rank)].rank, rank);
  }
}

TEST(AttributeTimeout, KeepsEveryRankState) {
  const auto report = attribute_timeout({state(0, 4, true), state(1, 3, false)},
                                        one_rank_per_process(2), 0, kTimeout);
  ASSERT_EQ(report.ranks.size(), 2u);
  EXPECT_EQ(report.ranks[1].operations_begun, 3);
  EXPECT_FALSE(report.ranks[1].inside_operation);
  EXPECT_TRUE(report.ranks[0].inside_operation);
}

// --- A real watchdog in one process ---------------------------------------------------------

// The handler prints the report to stderr, where the death test reads it.
void print_report(const TimeoutReport& report) {
  std::string culprits;
  for (const int rank : report.culprit_ranks)
    culprits += std::to_string(rank) + ";";
  std::string states;
  for (const auto& s : report.ranks) {
    states += std::to_string(s.rank) + ":" + std::to_string(s.operations_begun) + ":" +
              (s.inside_operation ? "in" : "out") + (s.responded ? "" : ":silent") + ";";
  }
  std::fprintf(stderr, "REPORT context=[%s] timeout=%g culprits=[%s] states=[%s] reports=%d\n",
               report.context.c_str(), report.timeout_seconds, culprits.c_str(), states.c_str(),
               report.this_process_reports ? 1 : 0);
}

void wait_for_the_watchdog() {
  // Long enough for a 0.2 s timeout plus the poll interval, short enough to fail fast if the
  // watchdog never fires.
  std::this_thread::sleep_for(std::chrono::seconds(5));
}

class WatchdogDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(WatchdogDeathTest, AnOverrunningOperationCallsTheHandlerAndExitsWithTimeout) {
  EXPECT_EXIT(
      {
        SingleProcessControlPlane control;
        Watchdog watchdog(control, {0}, {0}, 0.2, print_report);
        watchdog.set_context("allreduce float sum 1 MiB out-of-place");
        watchdog.begin(0);
        watchdog.end(0);    // the first operation completes
        watchdog.begin(0);  // the second never does
        wait_for_the_watchdog();
        std::fprintf(stderr, "the watchdog did not fire\n");
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(4),
      "REPORT context=\\[allreduce float sum 1 MiB out-of-place\\] timeout=0.2 culprits=\\[\\] "
      "states=\\[0:2:in;\\] reports=1");
}

TEST_F(WatchdogDeathTest, ALocalSlotThatNeverArrivedIsNamed) {
  // Two ranks driven by one process (NCCL -g 2): slot 1 never begins the second operation.
  EXPECT_EXIT(
      {
        SingleProcessControlPlane control;
        Watchdog watchdog(control, {0, 1}, {0, 0}, 0.2, print_report);
        watchdog.set_context("broadcast half root 0 64 KiB in-place");
        watchdog.begin_all();
        watchdog.end_all();
        watchdog.begin(0);
        wait_for_the_watchdog();
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(4), "culprits=\\[1;\\] states=\\[0:2:in;1:1:out;\\] reports=1");
}

TEST_F(WatchdogDeathTest, AJobWhoseOnlyRankNeverArrivesEndsNamingIt) {
  // One process, one GPU, an injected hang: no rank is inside an operation, yet the main thread
  // waits for the absent one; the timeout must still fire and blame it.
  EXPECT_EXIT(
      {
        SingleProcessControlPlane control;
        Watchdog watchdog(control, {0}, {0}, 0.2, print_report);
        watchdog.begin(0);
        watchdog.end(0);
        watchdog.await_absent(0);
        wait_for_the_watchdog();
        std::fprintf(stderr, "the watchdog did not fire\n");
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(4), "culprits=\\[0;\\] states=\\[0:1:out;\\] reports=1");
}

TEST_F(WatchdogDeathTest, ARankThatStopsInTheMiddleOfABatchIsNamedAbsentNotWaitingInside) {
  // The NCCL backend queues a batch; an injected hang stops the rank before one of its later
  // operations, while the earlier ones are still marked begun. The timeout must name the rank
  // as absent: reported "inside", a one-GPU job blamed the interconnect (seen on an H200).
  EXPECT_EXIT(
      {
        SingleProcessControlPlane control;
        Watchdog watchdog(control, {0}, {0}, 0.2, print_report);
        WatchedBatch batch(&watchdog);
        batch.begin(0);
        batch.begin(0);
        batch.await_absent(0);
        wait_for_the_watchdog();
        std::fprintf(stderr, "the watchdog did not fire\n");
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(4), "culprits=\\[0;\\] states=\\[0:2:out;\\] reports=1");
}

TEST_F(WatchdogDeathTest, AnAbsentRankStaysAwaitedWhenItsBatchEnds) {
  // Leaving the batch's scope must not stop the wait for the rank it awaits.
  EXPECT_EXIT(
      {
        SingleProcessControlPlane control;
        Watchdog watchdog(control, {0}, {0}, 0.2, print_report);
        {
          WatchedBatch batch(&watchdog);
          batch.begin(0);
          batch.await_absent(0);
        }
        wait_for_the_watchdog();
        std::fprintf(stderr, "the watchdog did not fire\n");
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(4), "culprits=\\[0;\\]");
}

// The RAII brackets: a throw out of a watched operation ends it (the slot is outside, so the
// report blames it once it stays away), and the other slot's queued operations stay watched.
TEST_F(WatchdogDeathTest, AThrowOutOfAWatchedSlotEndsItsOperation) {
  EXPECT_EXIT(
      {
        SingleProcessControlPlane control;
        Watchdog watchdog(control, {0, 1}, {0, 0}, 0.2, print_report);
        try {
          const WatchedSlot watched(&watchdog, 0);
          throw std::runtime_error("MPI_Barrier failed");
        } catch (const std::runtime_error&) {
        }
        WatchedBatch batch(&watchdog);
        batch.begin(1);
        batch.begin(1);  // two operations queued on slot 1, neither completes
        wait_for_the_watchdog();
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(4), "culprits=\\[0;\\] states=\\[0:1:out;1:2:in;\\] reports=1");
}

TEST_F(WatchdogDeathTest, AWatchedBatchEndsOnlyTheSlotThatFinished) {
  EXPECT_EXIT(
      {
        SingleProcessControlPlane control;
        Watchdog watchdog(control, {0, 1}, {0, 0}, 0.2, print_report);
        WatchedBatch batch(&watchdog);
        batch.begin(0);
        batch.begin(1);
        batch.end(0);  // slot 0 completed; slot 1 never does
        batch.end(0);  // ending it twice changes nothing
        wait_for_the_watchdog();
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(4), "states=\\[0:1:out;1:1:in;\\] reports=1");
}

TEST(Watchdog, AThrowOutOfAWatchedBatchEndsEverySlotThatBegan) {
  SingleProcessControlPlane control;
  bool fired = false;
  {
    Watchdog watchdog(control, {0, 1}, {0, 0}, 0.2,
                      [&fired](const TimeoutReport&) { fired = true; });
    try {
      WatchedBatch batch(&watchdog);
      batch.begin(0);
      batch.begin(1);
      throw std::runtime_error("ncclGroupEnd failed");
    } catch (const std::runtime_error&) {
    }
    EXPECT_EQ(watchdog.operations_begun(0), 1);
    EXPECT_EQ(watchdog.operations_begun(1), 1);
    // Nothing is inside an operation any more, so nothing can overrun.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_FALSE(fired);
}

TEST(Watchdog, WatchedBracketsWithoutAWatchdogDoNothing) {
  const WatchedSlot slot(nullptr, 0);
  WatchedBatch batch(nullptr);
  batch.begin(0);
  batch.refresh(0);
  batch.end(0);
  batch.end();
  const WatchedSection section(nullptr);
}

TEST(Watchdog, AnAwaitedSlotThatBeginsIsWatchedAsAnOperationAgain) {
  SingleProcessControlPlane control;
  bool fired = false;
  {
    Watchdog watchdog(control, {0}, {0}, 0.2, [&fired](const TimeoutReport&) { fired = true; });
    watchdog.await_absent(0);
    watchdog.begin(0);  // it arrived after all
    watchdog.end(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_FALSE(fired) << "an absent wait that ended in an operation must not time out";
}

// The collectives of a job of two processes, answered locally: what the two-process planes
// below share. Each says which process it is and how notices travel.
class TwoProcessCollectives : public ControlPlane {
 public:
  [[nodiscard]] int process_count() const override { return 2; }
  std::vector<std::string> all_gather(const std::string& mine) override { return {mine, mine}; }
  std::string broadcast_from_root(const std::string& value) override { return value; }
  void all_reduce_max(std::span<double> /*values*/) override {}
  std::vector<std::vector<double>> gather_to_root(std::span<const double> mine) override {
    return {std::vector<double>(mine.begin(), mine.end())};
  }
  void barrier() override {}
};

// Process 0 of two. The peer's answer to a timeout notice is not there at the first look (it
// is on its way, as over a real network) and arrives at the second.
class PeerAnswersLateControlPlane final : public TwoProcessCollectives {
 public:
  [[nodiscard]] int process_index() const override { return 0; }
  [[nodiscard]] bool has_side_channel() const override { return true; }
  void post_notice(std::span<const std::int64_t> /*payload*/) override { asked_ = true; }
  std::optional<WatchdogNotice> poll_notice() override {
    if (!asked_ || ++looks_after_asking_ != 2) return std::nullopt;
    // Rank 1 waits inside its second operation, like rank 0: declared now, idle 0.1 s.
    const std::int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
    return WatchdogNotice{1, {now_ns, 1, 2, 1, 100'000'000}};
  }
  [[noreturn]] void abort_job(int exit_code) noexcept override { std::_Exit(exit_code); }

 private:
  bool asked_ = false;
  int looks_after_asking_ = 0;
};

TEST_F(WatchdogDeathTest, APeerWhoseAnswerIsOnItsWayIsWaitedForNotBlamedAsSilent) {
  // Both ranks wait inside the same operation: nobody is to blame. Stopping at the first look
  // without an answer would name rank 1 as silent and quarantine its node.
  EXPECT_EXIT(
      {
        PeerAnswersLateControlPlane control;
        Watchdog watchdog(control, {0}, {0, 1}, 0.2, print_report);
        watchdog.begin(0);
        watchdog.end(0);
        watchdog.begin(0);
        wait_for_the_watchdog();
        std::fprintf(stderr, "the watchdog did not fire\n");
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(4), "culprits=\\[\\] states=\\[0:2:in;1:2:in;\\] reports=1");
}

// Process `index` of two. With a side channel, the peer's notice says it declared
// `peer_declared_ago_s` before now (wall clock), its rank 1 - index waiting inside its second
// operation; without `peer_declared_ago_s` the peer never answers (frozen). Without a side
// channel, posting or polling a notice breaks the interface's contract (MPI without
// MPI_THREAD_MULTIPLE): the process ends with exit code 3 so that a test sees it.
class TwoProcessControlPlane final : public TwoProcessCollectives {
 public:
  TwoProcessControlPlane(int index, bool side_channel, std::optional<double> peer_declared_ago_s)
      : index_(index), side_channel_(side_channel), peer_declared_ago_s_(peer_declared_ago_s) {}
  [[nodiscard]] int process_index() const override { return index_; }
  [[nodiscard]] bool has_side_channel() const override { return side_channel_; }
  void post_notice(std::span<const std::int64_t> /*payload*/) override { require_side_channel(); }
  std::optional<WatchdogNotice> poll_notice() override {
    require_side_channel();
    if (!peer_declared_ago_s_ || sent_) return std::nullopt;
    sent_ = true;
    const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    const auto ago_ns = static_cast<std::int64_t>(*peer_declared_ago_s_ * 1e9);
    return WatchdogNotice{1 - index_, {now_ns - ago_ns, 1 - index_, 2, 1, 100'000'000}};
  }
  [[noreturn]] void abort_job(int exit_code) noexcept override { std::_Exit(exit_code); }

 private:
  void require_side_channel() const {
    if (side_channel_) return;
    std::fputs("side channel used without one\n", stderr);
    std::_Exit(3);
  }

  int index_;
  bool side_channel_;
  std::optional<double> peer_declared_ago_s_;
  bool sent_ = false;
};

TEST_F(WatchdogDeathTest, AProcessThatDeclaresLongAfterItsPeerStandsDownAndWritesNoRecord) {
  // The peer declared a minute ago (this process was stopped meanwhile): the peer's record
  // stands, so this process must not write a second one; whichever process is the late one.
  for (const int index : {0, 1}) {
    EXPECT_EXIT(
        {
          TwoProcessControlPlane control(index, true, 60.0);
          Watchdog watchdog(control, {index}, {0, 1}, 10.0, print_report);
          watchdog.begin(0);  // slot 0: this process's one rank
          wait_for_the_watchdog();
          std::_Exit(0);
        },
        ::testing::ExitedWithCode(4),
        "process [01] was not answering while the others declared a timeout; the record they "
        "wrote stands.*reports=0")
        << index;
  }
}

TEST_F(WatchdogDeathTest, APeerThatNeverAnswersIsBlamedOnceTheGracePeriodEnds) {
  // Process 1 is frozen: after the grace period (2 s for a 0.2 s timeout) process 0 gives up
  // waiting, blames rank 1 as silent and writes the record.
  EXPECT_EXIT(
      {
        TwoProcessControlPlane control(0, true, std::nullopt);
        Watchdog watchdog(control, {0}, {0, 1}, 0.2, print_report);
        watchdog.begin(0);
        wait_for_the_watchdog();
        std::fprintf(stderr, "the watchdog did not end the job\n");
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(4),
      "culprits=\\[1;\\] states=\\[0:1:in;1:0:out:silent;\\] reports=1");
}

TEST_F(WatchdogDeathTest, WithoutASideChannelNobodyIsAskedOrBlamedAndProcessZeroAloneReports) {
  // Nobody can be asked: no notice is sent or awaited, no rank is blamed, the report says it
  // is not attributed, and only process 0 writes it, whichever process's watchdog fired.
  for (const int index : {0, 1}) {
    EXPECT_EXIT(
        {
          TwoProcessControlPlane control(index, false, std::nullopt);
          Watchdog watchdog(control, {index}, {0, 1}, 0.2, [](const TimeoutReport& report) {
            std::fprintf(stderr, "attributed=%d ", report.attributed ? 1 : 0);
            print_report(report);
          });
          watchdog.begin(0);  // slot 0: this process's one rank
          wait_for_the_watchdog();
          std::_Exit(0);
        },
        ::testing::ExitedWithCode(4),
        std::string("attributed=0 .*culprits=\\[\\] .*reports=") + (index == 0 ? "1" : "0"))
        << index;
  }
}

TEST_F(WatchdogDeathTest, AHandlerThatReturnsStillEndsTheJob) {
  EXPECT_EXIT(
      {
        SingleProcessControlPlane control;
        Watchdog watchdog(control, {0}, {0}, 0.2, [](const TimeoutReport&) {});
        watchdog.begin_all();
        wait_for_the_watchdog();
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(4), "");
}

TEST_F(WatchdogDeathTest, AHandlerThatThrowsStillEndsTheJob) {
  EXPECT_EXIT(
      {
        SingleProcessControlPlane control;
        Watchdog watchdog(control, {0}, {0}, 0.2,
                          [](const TimeoutReport&) { throw std::runtime_error("disk full"); });
        watchdog.begin_all();
        wait_for_the_watchdog();
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(4), "error while reporting a timeout");
}

TEST_F(WatchdogDeathTest, TheMainThreadSeesThatATimeoutIsBeingDeclared) {
  // The sweep's main thread asks this before recording an error of its own: once a timeout is
  // declared, errors are its consequence and the timeout record is the evidence.
  EXPECT_EXIT(
      {
        SingleProcessControlPlane control;
        Watchdog* watched = nullptr;
        Watchdog watchdog(control, {0}, {0}, 0.2, [&watched](const TimeoutReport&) {
          std::fprintf(stderr, "in handler declared=%d\n", watched->timeout_declared() ? 1 : 0);
        });
        watched = &watchdog;
        std::fprintf(stderr, "before declared=%d\n", watchdog.timeout_declared() ? 1 : 0);
        watchdog.begin(0);
        wait_for_the_watchdog();
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(4), "before declared=0.*in handler declared=1");
}

TEST(Watchdog, OperationsThatFinishInTimeNeverFire) {
  SingleProcessControlPlane control;
  bool fired = false;
  {
    Watchdog watchdog(control, {0, 1}, {0, 0}, 0.3,
                      [&fired](const TimeoutReport&) { fired = true; });
    for (int i = 0; i < 5; ++i) {
      WatchedSection section(&watchdog);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_EQ(watchdog.operations_begun(0), 5);
    EXPECT_EQ(watchdog.operations_begun(1), 5);
    // Idle time between operations is not an operation: no deadline runs.
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
  }
  EXPECT_FALSE(fired);
}

TEST(Watchdog, ZeroTimeoutDisablesTheWatch) {
  SingleProcessControlPlane control;
  Watchdog watchdog(control, {0}, {0}, 0, [](const TimeoutReport&) { std::_Exit(99); });
  watchdog.begin(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  watchdog.end(0);
  EXPECT_EQ(watchdog.operations_begun(0), 1);
  EXPECT_DOUBLE_EQ(watchdog.timeout_seconds(), 0);
}

TEST(Watchdog, GraceIsAQuarterOfTheTimeoutWithinTwoToTenSeconds) {
  SingleProcessControlPlane control;
  const std::pair<double, double> cases[] = {{0, 2},  {1, 2},   {8, 2},   {12, 3},
                                             {20, 5}, {40, 10}, {300, 10}};
  for (const auto& [timeout, grace] : cases) {
    // Nothing is begun, so the watchdog thread (if any) never fires.
    Watchdog watchdog(control, {0}, {0}, timeout, [](const TimeoutReport&) {});
    EXPECT_DOUBLE_EQ(watchdog.grace_seconds(), grace) << timeout;
  }
}

// --- Aborting communicators on a timeout ---------------------------------------------------

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(AbortSignal, TheRequesterWaitsForTheDrivingThreadToAbort) {
  AbortSignal signal;
  EXPECT_FALSE(signal.requested());
  // The driving thread polls, as NcclCommunicator's wait loop does, and aborts when asked.
  std::thread driver([&signal] {
    while (!signal.requested())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    signal.mark_done();
  });
  signal.request();
  EXPECT_TRUE(signal.wait_done(30));
  driver.join();
}

TEST(AbortSignal, TheWaitIsBoundedWhenTheDrivingThreadNeverPolls) {
  AbortSignal signal;
  signal.request();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(signal.wait_done(0.2));
  EXPECT_GE(seconds_since(start), 0.19);
  EXPECT_LT(seconds_since(start), 5.0);
}

TEST(AbortSignal, AnAbortAlreadyDoneAnswersAtOnce) {
  // The main thread aborted on an error of its own before the watchdog asked.
  AbortSignal signal;
  signal.mark_done();
  signal.request();
  EXPECT_TRUE(signal.wait_done(0));
}

std::vector<RankIdentity> two_ranks() {
  std::vector<RankIdentity> ranks(2);
  for (int r = 0; r < 2; ++r) {
    ranks[static_cast<std::size_t>(r)].rank = r;
    ranks[static_cast<std::size_t>(r)].node = r == 0 ? "nodeA" : "nodeB";
    ranks[static_cast<std::size_t>(r)].device = "host";
  }
  return ranks;
}

TimeoutReport rank_one_never_arrived(bool this_process_reports) {
  std::vector<RankTimeoutState> states = {state(0, 3, true), state(1, 2, false)};
  auto report = attribute_timeout(std::move(states), {0, 1}, 0, kTimeout);
  report.context = "allreduce float sum 1 MiB out-of-place";
  report.this_process_reports = this_process_reports;
  return report;
}

std::vector<Json> records_in(const RunOutput& output) {
  std::vector<Json> records;
  std::ifstream in(output.records_path());
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) records.push_back(Json::parse(line));
  }
  return records;
}

Json meta_of(const RunOutput& output) {
  std::ifstream in(output.meta_path());
  return in ? Json::parse(in) : Json();
}

struct TimeoutFixture {
  test_support::TempDirectory directory;
  RunOutput output{directory.path(), "20261121T233900Z-sweep-abcdef", true};
  std::vector<RankIdentity> ranks = two_ranks();
  test_support::ScriptedCommunicator communicator{1};
  CollectiveRecordContext context;

  TimeoutFixture() {
    context.origin.run_id = output.run_id();
    context.origin.host = "nodeA";
    context.backend = "nccl";
    context.ranks = &ranks;
  }
};

TEST(SweepTimeoutHandler, WritesTheRecordAndMetaBeforeAskingForTheAbort) {
  TimeoutFixture f;
  std::vector<Json> records_when_asked;
  Json meta_when_asked;
  f.communicator.on_abort_request = [&] {
    records_when_asked = records_in(f.output);
    meta_when_asked = meta_of(f.output);
    return true;
  };
  SweepTimeoutHandler handler(10, 0);
  handler.set_communicator(&f.communicator);
  handler.arm(&f.output, f.context, &f.ranks);
  handler.report(rank_one_never_arrived(true));

  ASSERT_EQ(records_when_asked.size(), 1u);
  EXPECT_EQ(records_when_asked[0].at("status"), "timeout");
  EXPECT_EQ(records_when_asked[0].at("operation"), "allreduce float sum 1 MiB out-of-place");
  EXPECT_EQ(meta_when_asked.at("status"), "timeout");
  EXPECT_EQ(meta_when_asked.at("exit_code"), 4);
  // The watchdog thread only asks; the thread that drives the communicator aborts it.
  EXPECT_EQ(f.communicator.aborts, 0);
  EXPECT_EQ(f.communicator.requested_wait_seconds, 10.0);
}

TEST(SweepTimeoutHandler, ADrivingThreadThatNeverPollsDelaysTheEndOnlyByTheBound) {
  // The NCCL communicator's request_abort: ask, then wait for the driving thread, which here is
  // blocked elsewhere (in an MPI exchange, in NCCL init) and never answers.
  TimeoutFixture f;
  AbortSignal signal;
  f.communicator.on_abort_request = [&] {
    signal.request();
    return signal.wait_done(*f.communicator.requested_wait_seconds);
  };
  SweepTimeoutHandler handler(0.2, 0);
  handler.set_communicator(&f.communicator);
  handler.arm(&f.output, f.context, &f.ranks);
  const auto start = std::chrono::steady_clock::now();
  handler.report(rank_one_never_arrived(true));
  EXPECT_GE(seconds_since(start), 0.19);
  EXPECT_LT(seconds_since(start), 5.0);
  EXPECT_TRUE(signal.requested());
  EXPECT_EQ(records_in(f.output).size(), 1u);  // the evidence was written regardless
}

TEST(SweepTimeoutHandler, AProcessThatDoesNotReportLetsTheReporterWriteFirst) {
  TimeoutFixture f;
  std::chrono::steady_clock::time_point asked;
  f.communicator.on_abort_request = [&] {
    asked = std::chrono::steady_clock::now();
    return true;
  };
  SweepTimeoutHandler handler(10, 0.2);
  handler.set_communicator(&f.communicator);
  handler.arm(&f.output, f.context, &f.ranks);
  const auto start = std::chrono::steady_clock::now();
  handler.report(rank_one_never_arrived(false));
  ASSERT_TRUE(f.communicator.requested_wait_seconds.has_value());
  EXPECT_GE(std::chrono::duration<double>(asked - start).count(), 0.19);
  EXPECT_TRUE(records_in(f.output).empty());  // the reporting process writes the record
}

// Process `index` of two with a side channel, whose peer has told process 0 why it fails (a
// failure notice waiting from the start).
class PeerFailedControlPlane final : public TwoProcessCollectives {
 public:
  explicit PeerFailedControlPlane(int index) : index_(index) {}
  [[nodiscard]] int process_index() const override { return index_; }
  [[nodiscard]] bool has_side_channel() const override { return true; }
  void post_notice(std::span<const std::int64_t> /*payload*/) override {}
  std::optional<WatchdogNotice> poll_notice() override { return std::nullopt; }
  std::optional<std::string> poll_failure() override {
    polled = true;
    if (sent_) return std::nullopt;
    sent_ = true;
    return std::string("process 1: injected fault");
  }
  [[noreturn]] void abort_job(int exit_code) noexcept override { std::_Exit(exit_code); }
  std::atomic<bool> polled{false};

 private:
  int index_;
  bool sent_ = false;
};

TEST_F(WatchdogDeathTest, ProcessZeroRecordsAPeersFailureThenEndsTheJobEvenWithoutATimeout) {
  EXPECT_EXIT(
      {
        PeerFailedControlPlane control(0);
        Watchdog watchdog(control, {0}, {0, 1}, 0, print_report, [](const std::string& text) {
          std::fprintf(stderr, "RECORDED [%s]\n", text.c_str());
        });
        EXPECT_TRUE(watchdog.peer_failures_heard());
        wait_for_the_watchdog();
        std::fprintf(stderr, "the watchdog did not hear the failure\n");
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(3), "RECORDED \\[process 1: injected fault\\]");
}

TEST(Watchdog, OnlyProcessZeroListensForPeerFailures) {
  PeerFailedControlPlane control(1);
  bool called = false;
  {
    Watchdog watchdog(control, {1}, {0, 1}, 0.5, print_report,
                      [&called](const std::string&) { called = true; });
    EXPECT_TRUE(watchdog.peer_failures_heard());  // process 0 hears this one
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_FALSE(control.polled);
  EXPECT_FALSE(called);
}

TEST(SweepTimeoutHandler, BeforeSetUpEndsItOnlyReports) {
  // A timeout during communicator creation: nothing to write to and nothing to abort yet.
  SweepTimeoutHandler handler(10, 0);
  handler.report(rank_one_never_arrived(true));
  SUCCEED();
}

}  // namespace
}  // namespace commcert
