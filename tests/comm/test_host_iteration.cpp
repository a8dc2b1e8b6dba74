#include <algorithm>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "comm/host_iteration.hpp"

namespace commcert {
namespace {

using Step = IterationStep;

std::ptrdiff_t position(const std::vector<Step>& steps, Step step) {
  const auto found = std::find(steps.begin(), steps.end(), step);
  return found == steps.end() ? -1 : found - steps.begin();
}

TEST(HostIteration, WithoutChecksOperationsRunBackToBackAsAPlainLoop) {
  EXPECT_EQ(iteration_steps({}),
            (std::vector<Step>{Step::kDelay, Step::kOperation, Step::kCorrupt}));
  EXPECT_EQ(iteration_steps({.in_place = true}),
            (std::vector<Step>{Step::kDelay, Step::kOperation, Step::kCorrupt}));
}

TEST(HostIteration, OutOfPlaceCheckPreparesEverythingBeforeTheRealigningBarrier) {
  const auto steps = iteration_steps({.check = true, .realign = true});
  EXPECT_EQ(steps,
            (std::vector<Step>{Step::kWarmInput, Step::kPrepareOutput, Step::kRealign, Step::kDelay,
                               Step::kOperation, Step::kCorrupt, Step::kCheck}));
}

TEST(HostIteration, InPlaceRestoreNeedsNoWarmingItReadsTheInput) {
  const auto steps = iteration_steps({.check = true, .realign = true, .in_place = true});
  EXPECT_EQ(steps, (std::vector<Step>{Step::kPrepareOutput, Step::kRealign, Step::kDelay,
                                      Step::kOperation, Step::kCorrupt, Step::kCheck}));
}

TEST(HostIteration, NothingButAnInjectedDelaySitsBetweenBarrierAndWindow) {
  for (const bool check : {false, true}) {
    for (const bool in_place : {false, true}) {
      for (const bool blocking : {false, true}) {
        const auto steps = iteration_steps(
            {.check = check, .realign = check, .in_place = in_place, .blocking = blocking});
        const auto operation = position(steps, Step::kOperation);
        ASSERT_GE(operation, 1);
        EXPECT_EQ(steps[static_cast<std::size_t>(operation - 1)], Step::kDelay);
        const auto realign = position(steps, Step::kRealign);
        if (check) {
          EXPECT_EQ(realign, operation - 2);
          EXPECT_LT(position(steps, Step::kPrepareOutput), realign);
          EXPECT_GT(position(steps, Step::kCheck), operation);
          // The injected corruption lands before the check, so it is counted.
          EXPECT_LT(position(steps, Step::kCorrupt), position(steps, Step::kCheck));
        } else {
          EXPECT_EQ(realign, -1);
          EXPECT_EQ(position(steps, Step::kPrepareOutput), -1);
          EXPECT_EQ(position(steps, Step::kCheck), -1);
        }
        EXPECT_EQ(position(steps, Step::kBarrierAfter) > operation, blocking);
      }
    }
  }
}

TEST(HostIteration, RanksWithoutOutputStillRealignWithThoseThatCheck) {
  // The root of an out-of-place broadcast has no output: it checks nothing but must enter the
  // same barriers as its peers.
  const auto steps = iteration_steps({.check = false, .realign = true});
  EXPECT_EQ(steps,
            (std::vector<Step>{Step::kRealign, Step::kDelay, Step::kOperation, Step::kCorrupt}));
}

TEST(HostIteration, TouchForReadFoldsOneWordPerCacheLine) {
  std::vector<std::uint64_t> words(64, 0);  // 512 bytes: 8 lines of 8 words
  EXPECT_EQ(touch_for_read(words.data(), 512), 0u);
  words[8] = 0xf0;  // start of line 1: read
  words[9] = 0x0f;  // inside line 1: not read
  words[16] = 0x3;  // start of line 2
  EXPECT_EQ(touch_for_read(words.data(), 512), 0xf0u ^ 0x3u);
  EXPECT_EQ(touch_for_read(words.data(), 64), 0u);  // only line 0
  // A tail shorter than a word is read without going past the end.
  std::vector<unsigned char> bytes(67, 0);
  bytes[64] = 0x11;
  bytes[66] = 0x22;
  EXPECT_EQ(touch_for_read(bytes.data(), 67), 0x220011u);
  EXPECT_EQ(touch_for_read(bytes.data(), 0), 0u);
}

TEST(HostIteration, CheckedBatchesAreTimedAgainBackToBack) {
  // Checks between operations change what the cache holds when each starts, so `time` comes
  // from a second, unchecked pass of the same operations run as a plain loop.
  LoopPlan plan;
  plan.iterations = 20;
  EXPECT_TRUE(times_back_to_back_pass(plan));
  const FaultPlan no_faults;
  plan.faults = &no_faults;
  EXPECT_TRUE(times_back_to_back_pass(plan));
}

TEST(HostIteration, NoSecondPassWhereTheFirstIsAlreadyTheFigure) {
  const auto with = [](auto change) {
    LoopPlan plan;
    plan.iterations = 20;
    change(plan);
    return times_back_to_back_pass(plan);
  };
  // -c 0: the timed operations already ran back to back.
  EXPECT_FALSE(with([](LoopPlan& p) { p.check = false; }));
  // Warm-up: nothing is timed.
  EXPECT_FALSE(with([](LoopPlan& p) { p.timed = false; }));
  // -z 1: a barrier after every operation is what was asked for; its windows are the figure.
  EXPECT_FALSE(with([](LoopPlan& p) { p.blocking = 1; }));
  EXPECT_FALSE(with([](LoopPlan& p) { p.iterations = 0; }));
  // An injected fault acts between the operations of the checked pass, whose windows show it.
  const FaultPlan delay = parse_fault_plan("delay:1:1000");
  EXPECT_FALSE(with([&](LoopPlan& p) { p.faults = &delay; }));
}

}  // namespace
}  // namespace commcert
