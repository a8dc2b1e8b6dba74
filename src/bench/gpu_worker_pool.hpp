#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "core/clock.hpp"

namespace commcert {

// What a GPU stage's engine hands back: one outcome per worker, in the order given.
template <typename Outcome>
struct WorkerRun {
  std::vector<Outcome> outcomes;
  // A worker thread is stuck inside the driver past every deadline; the process must not wait
  // for it at exit (the stage ends the process once its records are written: leave_stage).
  bool abandoned = false;
};

// When a pool stops waiting for workers that have not finished.
struct WorkerPatience {
  // Give up once this passes: every step of a worker is bounded by the stage's timeout, so a
  // worker past all of them is stuck in the driver (burn, membw).
  Deadline give_up = Deadline::never();
  // Give up once the workers' step count has not moved for this long (p2p: one worker runs test
  // after test, each bounded); 0: no such limit.
  double stall_s = 0;
  std::chrono::milliseconds poll{200};
};

// The host threads of a GPU stage, one per worker (a GPU, or the whole node for p2p), and what
// becomes of one stuck in the driver: a CUDA call that never returns cannot be interrupted, so
// the pool stops waiting for it (detaches it) and says so (WorkerRun::abandoned).
//
// A worker's outcome and step counter are shared with its thread, so an abandoned thread writes
// only to what it owns. `work` runs on the worker's thread and may outlive the pool: it must own
// what it uses (capture by value or shared_ptr, never a caller's local by reference).
template <typename Outcome>
class GpuWorkerPool {
 public:
  // Runs on worker `index`'s thread; counts its steps in `steps` (progress, stall detection).
  using Work =
      std::function<void(std::size_t index, Outcome& outcome, std::atomic<std::size_t>& steps)>;
  // Runs on the worker's thread when `work` throws: the error becomes the outcome.
  using Failure = std::function<void(Outcome& outcome, const std::exception& error)>;
  // The outcome of a worker the pool gave up on, from its seed and the steps it had done.
  using Stuck = std::function<Outcome(const Outcome& seed, std::size_t steps)>;

  // One worker per seed (its outcome's starting value), each on a thread of its own at once.
  GpuWorkerPool(std::vector<Outcome> seeds, Work work, Failure failed) {
    auto shared_work = std::make_shared<Work>(std::move(work));
    auto shared_failed = std::make_shared<Failure>(std::move(failed));
    for (std::size_t index = 0; index < seeds.size(); ++index) {
      auto worker = std::make_shared<Worker>();
      worker->seed = seeds[index];
      worker->outcome = std::move(seeds[index]);
      worker->thread = std::thread([worker, shared_work, shared_failed, index] {
        run_worker(*worker, *shared_work, *shared_failed, index);
      });
      workers_.push_back(std::move(worker));
    }
  }

  // A thread collect() did not take is detached, not waited for: it may never return.
  ~GpuWorkerPool() {
    for (auto& worker : workers_) {
      if (worker->thread.joinable()) worker->thread.detach();
    }
  }
  GpuWorkerPool(const GpuWorkerPool&) = delete;
  GpuWorkerPool& operator=(const GpuWorkerPool&) = delete;

  [[nodiscard]] bool all_done() const {
    for (const auto& worker : workers_) {
      if (!worker->done.load()) return false;
    }
    return true;
  }

  // Every worker's steps so far.
  [[nodiscard]] std::size_t steps() const {
    std::size_t total = 0;
    for (const auto& worker : workers_)
      total += worker->steps.load();
    return total;
  }

  // Polls until every worker is done or `patience` runs out; `on_poll(steps)` runs on the
  // calling thread at every poll, the last one included. True when every worker finished.
  bool wait(const WorkerPatience& patience,
            const std::function<void(std::size_t steps)>& on_poll = {}) {
    std::size_t seen = steps();
    auto last_change = SteadyClock::now();
    for (;;) {
      const std::size_t now_steps = steps();
      if (now_steps != seen) {
        seen = now_steps;
        last_change = SteadyClock::now();
      }
      if (on_poll) on_poll(now_steps);
      if (all_done()) return true;
      if (patience.give_up.expired()) return false;
      if (patience.stall_s > 0 &&
          seconds_between(last_change, SteadyClock::now()) > patience.stall_s)
        return false;
      std::this_thread::sleep_for(patience.poll);
    }
  }

  // Waits for every worker however long it takes: for a caller that told them to stop.
  void join_all() {
    for (auto& worker : workers_) {
      if (worker->thread.joinable()) worker->thread.join();
    }
  }

  // The outcomes in worker order: a finished worker's own; for one still running, `stuck(seed,
  // its steps)`, its thread detached and the run marked abandoned.
  [[nodiscard]] WorkerRun<Outcome> collect(const Stuck& stuck) {
    WorkerRun<Outcome> run;
    for (auto& worker : workers_) {
      if (worker->done.load()) {
        if (worker->thread.joinable()) worker->thread.join();
        run.outcomes.push_back(std::move(worker->outcome));
        continue;
      }
      if (worker->thread.joinable()) worker->thread.detach();
      run.abandoned = true;
      run.outcomes.push_back(stuck(worker->seed, worker->steps.load()));
    }
    return run;
  }

 private:
  struct Worker {
    Outcome seed;  // never written by the thread: what a stuck worker's outcome starts from
    Outcome outcome;
    std::atomic<std::size_t> steps{0};
    std::atomic<bool> done{false};
    std::thread thread;
  };

  static void run_worker(Worker& worker, const Work& work, const Failure& failed,
                         std::size_t index) {
    try {
      work(index, worker.outcome, worker.steps);
    } catch (const std::exception& error) {
      failed(worker.outcome, error);
    } catch (...) {
      failed(worker.outcome, std::runtime_error("unknown error"));
    }
    worker.done = true;
  }

  std::vector<std::shared_ptr<Worker>> workers_;
};

}  // namespace commcert
