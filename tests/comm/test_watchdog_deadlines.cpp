// The watchdog's deadlines and its end of the job, from outside: nothing is declared before an
// operation's timeout (whichever way its deadline was set), a slot that ended is no longer waited
// for, a slot that has just left an operation is not blamed as absent, a peer's empty notice is
// no answer, and the job ends through the control plane.
#include <chrono>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "comm/control_plane.hpp"
#include "comm/watchdog.hpp"

namespace commcert {
namespace {

std::int64_t wall_clock_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The culprits and each rank's state, where the death tests read them.
void print_culprits(const TimeoutReport& report) {
  std::string culprits;
  for (const int rank : report.culprit_ranks)
    culprits += std::to_string(rank) + ";";
  std::string states;
  for (const auto& s : report.ranks) {
    states += std::to_string(s.rank) + ":" + std::to_string(s.operations_begun) + ":" +
              (s.inside_operation ? "in" : "out") + (s.responded ? "" : ":silent") + ";";
  }
  std::fprintf(stderr, "REPORT culprits=[%s] states=[%s]\n", culprits.c_str(), states.c_str());
}

// The collectives of a job of `count` processes, answered locally, with a side channel: what
// the two planes below share.
class LocalCollectives : public ControlPlane {
 public:
  explicit LocalCollectives(int count) : count_(count) {}
  [[nodiscard]] int process_index() const override { return 0; }
  [[nodiscard]] int process_count() const override { return count_; }
  std::vector<std::string> all_gather(const std::string& mine) override {
    return std::vector<std::string>(static_cast<std::size_t>(count_), mine);
  }
  std::string broadcast_from_root(const std::string& value) override { return value; }
  void all_reduce_max(std::span<double> /*values*/) override {}
  std::vector<std::vector<double>> gather_to_root(std::span<const double> mine) override {
    return {std::vector<double>(mine.begin(), mine.end())};
  }
  void barrier() override {}
  [[nodiscard]] bool has_side_channel() const override { return true; }
  void post_notice(std::span<const std::int64_t> /*payload*/) override {}

 private:
  int count_;
};

// One process whose ending of the job can be seen: abort_job says so before it exits.
class OneProcessNamingItsAbort final : public LocalCollectives {
 public:
  OneProcessNamingItsAbort() : LocalCollectives(1) {}
  std::optional<WatchdogNotice> poll_notice() override { return std::nullopt; }
  [[noreturn]] void abort_job(int exit_code) noexcept override {
    std::fprintf(stderr, "ABORT_JOB %d\n", exit_code);
    std::fflush(stderr);
    ::_exit(exit_code);
  }
};

// Process 0 of two whose peer's first notice is `payload` (its process 1), sent at the first
// poll `after` the plane was made.
class PeerNoticeControlPlane final : public LocalCollectives {
 public:
  explicit PeerNoticeControlPlane(std::vector<std::int64_t> payload,
                                  std::chrono::milliseconds after = {})
      : LocalCollectives(2),
        payload_(std::move(payload)),
        send_at_(std::chrono::steady_clock::now() + after) {}
  std::optional<WatchdogNotice> poll_notice() override {
    if (sent_ || std::chrono::steady_clock::now() < send_at_) return std::nullopt;
    sent_ = true;
    return WatchdogNotice{1, payload_};
  }
  [[noreturn]] void abort_job(int exit_code) noexcept override { ::_exit(exit_code); }

 private:
  std::vector<std::int64_t> payload_;
  std::chrono::steady_clock::time_point send_at_;
  bool sent_ = false;
};

// Long enough for any of these timeouts plus the poll interval; a watchdog that never fires ends
// the child with 0, which no death test here expects.
[[noreturn]] void wait_for_the_watchdog() {
  std::this_thread::sleep_for(std::chrono::seconds(5));
  std::_Exit(0);
}

class WatchdogDeadlineDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// A begun operation, an awaited absent slot and a refreshed deadline each get the whole
// timeout: half of it passes without a declaration. (A watchdog that declares ends the process,
// so a deadline set too early fails this test by exiting.)
TEST(WatchdogDeadline, NothingIsDeclaredBeforeTheTimeout) {
  SingleProcessControlPlane control;
  bool fired = false;
  {
    Watchdog watchdog(control, {0, 1, 2}, {0, 0, 0}, 3.0,
                      [&fired](const TimeoutReport&) { fired = true; });
    watchdog.begin(0);
    watchdog.await_absent(1);
    watchdog.begin(2);
    watchdog.refresh(2);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_FALSE(watchdog.timeout_declared());
    watchdog.end_all();
  }
  EXPECT_FALSE(fired);
}

// A slot awaited as absent that then ends (its wait is over) is not waited for any more.
TEST(WatchdogDeadline, AnAwaitedSlotThatEndsIsNoLongerWaitedFor) {
  SingleProcessControlPlane control;
  bool fired = false;
  {
    Watchdog watchdog(control, {0}, {0}, 0.2, [&fired](const TimeoutReport&) { fired = true; });
    watchdog.await_absent(0);
    watchdog.end(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    EXPECT_FALSE(watchdog.timeout_declared());
  }
  EXPECT_FALSE(fired);
}

TEST(WatchdogDeadline, ABatchWithoutAWatchdogIgnoresAnAwaitedSlot) {
  WatchedBatch batch(nullptr);
  batch.begin(0);
  batch.await_absent(0);
  batch.end(0);
  batch.end();
  SUCCEED();
}

// Slot 1 left its operation a moment before slot 0's timeout: it is outside for far less than
// half the timeout, so it is not blamed; the operation itself is stuck.
TEST_F(WatchdogDeadlineDeathTest, ASlotThatJustLeftItsOperationIsNotBlamed) {
  EXPECT_EXIT(
      {
        SingleProcessControlPlane control;
        Watchdog watchdog(control, {0, 1}, {0, 0}, 2.0, print_culprits);
        watchdog.begin_all();
        std::this_thread::sleep_for(std::chrono::milliseconds(1700));
        watchdog.end(1);
        wait_for_the_watchdog();
      },
      ::testing::ExitedWithCode(4), "REPORT culprits=\\[\\] states=\\[0:1:in;1:1:out;\\]");
}

// A batch ends the slot it is told to and keeps the others to end with it: after slot 1 ends
// alone, ending the batch ends slot 0, and nothing is left to overrun.
TEST(WatchdogDeadline, ABatchEndsTheNamedSlotAndTheRestWithIt) {
  SingleProcessControlPlane control;
  bool fired = false;
  {
    Watchdog watchdog(control, {0, 1}, {0, 0}, 0.2,
                      [&fired](const TimeoutReport&) { fired = true; });
    WatchedBatch batch(&watchdog);
    batch.begin(0);
    batch.begin(1);
    batch.end(1);
    batch.end();
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    EXPECT_FALSE(watchdog.timeout_declared());
  }
  EXPECT_FALSE(fired);
}

// A peer's notice that carries nothing is no answer: the peer is silent, not a crash.
TEST_F(WatchdogDeadlineDeathTest, APeerNoticeWithoutAPayloadIsNoAnswer) {
  EXPECT_EXIT(
      {
        PeerNoticeControlPlane control({});
        Watchdog watchdog(control, {0}, {0, 1}, 10.0, print_culprits);
        watchdog.begin(0);
        wait_for_the_watchdog();
      },
      ::testing::ExitedWithCode(4), "REPORT culprits=\\[1;\\] states=\\[0:1:in;1:0:out:silent;\\]");
}

// A peer declares before this process began anything: its slots, idle only since the watchdog
// started, are not absent for half a timeout.
TEST_F(WatchdogDeadlineDeathTest, SlotsThatNeverBeganAreIdleOnlySinceTheWatchdogStarted) {
  EXPECT_EXIT(
      {
        PeerNoticeControlPlane control({wall_clock_now_ns(), 2, 1, 1, 0});
        Watchdog watchdog(control, {0, 1}, {0, 0, 1}, 10.0, print_culprits);
        wait_for_the_watchdog();
      },
      ::testing::ExitedWithCode(4), "REPORT culprits=\\[\\] states=\\[0:0:out;1:0:out;2:1:in;\\]");
}

// A slot awaited as absent long after its last operation ended has been away since that end,
// not since the wait began: a peer's notice right after the wait finds it absent.
TEST_F(WatchdogDeadlineDeathTest, AnAwaitedSlotHasBeenAwaySinceItsLastOperation) {
  EXPECT_EXIT(
      {
        PeerNoticeControlPlane control({wall_clock_now_ns(), 1, 1, 1, 0},
                                       std::chrono::milliseconds(700));
        Watchdog watchdog(control, {0}, {0, 1}, 1.0, print_culprits);
        watchdog.begin(0);
        watchdog.end(0);
        std::this_thread::sleep_for(std::chrono::milliseconds(600));
        watchdog.await_absent(0);
        wait_for_the_watchdog();
      },
      ::testing::ExitedWithCode(4), "REPORT culprits=\\[0;\\]");
}

// A batch that awaits one slot still ends the others it began when it ends.
TEST_F(WatchdogDeadlineDeathTest, AwaitingOneSlotOfABatchLeavesTheOthersToTheBatch) {
  EXPECT_EXIT(
      {
        SingleProcessControlPlane control;
        Watchdog watchdog(control, {0, 1}, {0, 0}, 0.2, print_culprits);
        {
          WatchedBatch batch(&watchdog);
          batch.begin(0);
          batch.begin(1);
          batch.await_absent(0);
        }
        wait_for_the_watchdog();
      },
      ::testing::ExitedWithCode(4), "states=\\[0:1:out;1:1:out;\\]");
}

// A slot that arrived after an absent wait, began, and then stopped again before its next
// operation is absent again: awaited anew, not left inside the operation it began.
TEST_F(WatchdogDeadlineDeathTest, ASlotAbsentAgainAfterArrivingIsAwaitedAnew) {
  EXPECT_EXIT(
      {
        SingleProcessControlPlane control;
        Watchdog watchdog(control, {0}, {0}, 0.2, print_culprits);
        watchdog.await_absent(0);
        watchdog.begin(0);
        watchdog.await_absent(0);
        wait_for_the_watchdog();
      },
      ::testing::ExitedWithCode(4), "REPORT culprits=\\[0;\\] states=\\[0:1:out;\\]");
}

// A batch ends each slot once: a slot it ended, alone or with the rest, that begins again
// outside it stays watched when the batch goes away.
TEST_F(WatchdogDeadlineDeathTest, ABatchEndsEachSlotOnce) {
  EXPECT_EXIT(
      {
        SingleProcessControlPlane control;
        Watchdog watchdog(control, {0, 1}, {0, 0}, 0.2, print_culprits);
        {
          WatchedBatch batch(&watchdog);
          batch.begin(0);
          batch.begin(1);
          batch.end(0);
          watchdog.begin(0);  // slot 0's next operation, outside the batch
        }
        wait_for_the_watchdog();
      },
      ::testing::ExitedWithCode(4), "states=\\[0:2:in;1:1:out;\\]");
  EXPECT_EXIT(
      {
        SingleProcessControlPlane control;
        Watchdog watchdog(control, {0, 1}, {0, 0}, 0.2, print_culprits);
        {
          WatchedBatch batch(&watchdog);
          batch.begin(0);
          batch.begin(1);
          batch.end();
          watchdog.begin(0);
          watchdog.begin(1);
        }
        wait_for_the_watchdog();
      },
      ::testing::ExitedWithCode(4), "states=\\[0:2:in;1:2:in;\\]");
}

// Waiting on behalf of an absent slot again and again does not move its deadline.
TEST_F(WatchdogDeadlineDeathTest, AwaitingAnAbsentSlotAgainKeepsItsDeadline) {
  EXPECT_EXIT(
      {
        SingleProcessControlPlane control;
        Watchdog watchdog(control, {0}, {0}, 0.2, print_culprits);
        for (int i = 0; i < 100; ++i) {
          watchdog.await_absent(0);
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(4), "REPORT culprits=\\[0;\\]");
}

// A slot that stops inside a batch it began long ago has been away only since it stopped: a
// peer's notice just after finds it outside, not yet absent for half the timeout.
TEST_F(WatchdogDeadlineDeathTest, ASlotThatStopsMidBatchIsAwayOnlySinceItStopped) {
  EXPECT_EXIT(
      {
        PeerNoticeControlPlane control({wall_clock_now_ns(), 1, 1, 1, 0},
                                       std::chrono::milliseconds(700));
        Watchdog watchdog(control, {0}, {0, 1}, 1.0, print_culprits);
        watchdog.begin(0);
        std::this_thread::sleep_for(std::chrono::milliseconds(600));
        watchdog.await_absent(0);
        wait_for_the_watchdog();
      },
      ::testing::ExitedWithCode(4), "REPORT culprits=\\[\\] states=\\[0:1:out;1:1:in;\\]");
}

// A timeout ends the job through the control plane (MPI_Abort for an MPI job), not this process
// alone.
TEST_F(WatchdogDeadlineDeathTest, ATimeoutEndsTheJobThroughTheControlPlane) {
  EXPECT_EXIT(
      {
        OneProcessNamingItsAbort control;
        Watchdog watchdog(control, {0}, {0}, 0.2, [](const TimeoutReport&) {});
        watchdog.begin(0);
        wait_for_the_watchdog();
      },
      ::testing::ExitedWithCode(4), "ABORT_JOB 4");
}

}  // namespace
}  // namespace commcert
