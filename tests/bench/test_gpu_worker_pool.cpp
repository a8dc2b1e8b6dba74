// The worker pool every GPU stage's engine runs its GPUs on (burn, membw, p2p), with fake
// workers: what a finished, a failed and a stuck worker each become, and when the pool stops
// waiting for one stuck in the driver.
#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "bench/gpu_worker_pool.hpp"

namespace commcert {
namespace {

using namespace std::chrono_literals;

struct FakeOutcome {
  int gpu = 0;
  std::string status = "ok";
  std::string reason;
  int result = 0;
};

// Holds a worker as a CUDA call stuck in the driver would, until the test lets it go (so no
// thread outlives the test binary's exit).
class Gate {
 public:
  void hold() const {
    state_->entered = true;
    while (!state_->open.load())
      std::this_thread::sleep_for(1ms);
    state_->left = true;
  }
  void wait_until_held() const {
    while (!state_->entered.load())
      std::this_thread::sleep_for(1ms);
  }
  void open_and_wait_for_exit() const {
    state_->open = true;
    while (state_->entered.load() && !state_->left.load())
      std::this_thread::sleep_for(1ms);
  }

 private:
  struct State {
    std::atomic<bool> open{false};
    std::atomic<bool> entered{false};
    std::atomic<bool> left{false};
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

std::vector<FakeOutcome> seeds(int count) {
  std::vector<FakeOutcome> out(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    out[static_cast<std::size_t>(i)].gpu = i;
  return out;
}

void record_failure(FakeOutcome& out, const std::exception& error) {
  out.status = "error";
  out.reason = "GPU " + std::to_string(out.gpu) + ": " + error.what();
}

FakeOutcome stuck_outcome(const FakeOutcome& seed, std::size_t steps) {
  FakeOutcome stuck;
  stuck.gpu = seed.gpu;
  stuck.status = "timeout";
  stuck.reason = "stuck after " + std::to_string(steps) + " step(s)";
  return stuck;
}

WorkerPatience patience_of(std::chrono::milliseconds give_up) {
  WorkerPatience patience;
  patience.give_up = Deadline::after_seconds(std::chrono::duration<double>(give_up).count());
  patience.poll = 5ms;
  return patience;
}

TEST(GpuWorkerPool, AFinishedAFailedAndAStuckWorkerEachGetTheirOutcomeInOrder) {
  const Gate gate;
  GpuWorkerPool<FakeOutcome> pool(
      seeds(3),
      [gate](std::size_t index, FakeOutcome& out, std::atomic<std::size_t>& steps) {
        if (index == 0) {
          out.result = 42;
          steps += 3;
        } else if (index == 1) {
          throw std::runtime_error("out of memory");
        } else {
          ++steps;
          gate.hold();
          out.result = 7;  // after the pool gave up: written to the worker's own outcome
        }
      },
      record_failure);
  gate.wait_until_held();
  EXPECT_FALSE(pool.wait(patience_of(300ms)));
  WorkerRun<FakeOutcome> run = pool.collect(stuck_outcome);
  gate.open_and_wait_for_exit();

  EXPECT_TRUE(run.abandoned);
  ASSERT_EQ(run.outcomes.size(), 3U);
  EXPECT_EQ(run.outcomes[0].status, "ok");
  EXPECT_EQ(run.outcomes[0].result, 42);
  EXPECT_EQ(run.outcomes[1].status, "error");
  EXPECT_EQ(run.outcomes[1].reason, "GPU 1: out of memory");
  EXPECT_EQ(run.outcomes[2].gpu, 2);
  EXPECT_EQ(run.outcomes[2].status, "timeout");
  EXPECT_EQ(run.outcomes[2].reason, "stuck after 1 step(s)");
  EXPECT_EQ(run.outcomes[2].result, 0);
}

TEST(GpuWorkerPool, WorkersThatAllFinishAreJoinedAndTheLastPollSeesEveryStep) {
  GpuWorkerPool<FakeOutcome> pool(
      seeds(4),
      [](std::size_t index, FakeOutcome& out, std::atomic<std::size_t>& steps) {
        std::this_thread::sleep_for(20ms);
        out.result = static_cast<int>(index) * 10;
        steps += 2;
      },
      record_failure);
  std::vector<std::size_t> polls;
  EXPECT_TRUE(pool.wait(patience_of(60s), [&](std::size_t steps) { polls.push_back(steps); }));
  ASSERT_FALSE(polls.empty());
  EXPECT_EQ(polls.back(), 8U);
  const WorkerRun<FakeOutcome> run = pool.collect(stuck_outcome);
  EXPECT_FALSE(run.abandoned);
  ASSERT_EQ(run.outcomes.size(), 4U);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(run.outcomes[static_cast<std::size_t>(i)].status, "ok");
    EXPECT_EQ(run.outcomes[static_cast<std::size_t>(i)].result, i * 10);
  }
}

TEST(GpuWorkerPool, AWorkerThatStopsMakingProgressIsGivenUpAfterTheStallLimit) {
  const Gate gate;
  GpuWorkerPool<FakeOutcome> pool(
      seeds(1),
      [gate](std::size_t /*index*/, FakeOutcome& /*out*/, std::atomic<std::size_t>& steps) {
        steps += 2;  // two tests done, then the third never returns
        gate.hold();
      },
      record_failure);
  WorkerPatience patience;  // no overall deadline: only the stall limit ends the wait
  patience.stall_s = 0.2;
  patience.poll = 5ms;
  gate.wait_until_held();
  const auto started = SteadyClock::now();
  EXPECT_FALSE(pool.wait(patience));
  EXPECT_GE(seconds_between(started, SteadyClock::now()), 0.2);
  const WorkerRun<FakeOutcome> run = pool.collect(stuck_outcome);
  gate.open_and_wait_for_exit();
  EXPECT_TRUE(run.abandoned);
  ASSERT_EQ(run.outcomes.size(), 1U);
  EXPECT_EQ(run.outcomes[0].reason, "stuck after 2 step(s)");
}

TEST(GpuWorkerPool, AWorkerThatKeepsMakingProgressOutlastsTheStallLimit) {
  GpuWorkerPool<FakeOutcome> pool(
      seeds(1),
      [](std::size_t /*index*/, FakeOutcome& /*out*/, std::atomic<std::size_t>& steps) {
        for (int i = 0; i < 10; ++i) {  // 0.5 s in all, a step every 50 ms
          std::this_thread::sleep_for(50ms);
          ++steps;
        }
      },
      record_failure);
  WorkerPatience patience;
  patience.stall_s = 0.3;
  patience.poll = 5ms;
  EXPECT_TRUE(pool.wait(patience));
  const WorkerRun<FakeOutcome> run = pool.collect(stuck_outcome);
  EXPECT_FALSE(run.abandoned);
  EXPECT_EQ(run.outcomes[0].status, "ok");
}

TEST(GpuWorkerPool, JoinAllWaitsForWorkersTheCallerToldToStop) {
  auto stop = std::make_shared<std::atomic<bool>>(false);
  GpuWorkerPool<FakeOutcome> pool(
      seeds(2),
      [stop](std::size_t /*index*/, FakeOutcome& out, std::atomic<std::size_t>& /*steps*/) {
        while (!stop->load())
          std::this_thread::sleep_for(1ms);
        out.status = "stopped";
      },
      record_failure);
  EXPECT_FALSE(pool.all_done());
  *stop = true;
  pool.join_all();
  EXPECT_TRUE(pool.all_done());
}

}  // namespace
}  // namespace commcert
