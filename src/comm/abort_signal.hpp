#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace commcert {

// How another thread (the watchdog's) gets communicators aborted by the thread that drives
// them. NCCL communicators must not be aborted under a thread that is still polling them
// (ncclCommGetAsyncError, cudaEventQuery on their streams): the requester asks, the driving
// thread aborts at its next poll and says so, and the requester waits a bounded time for that,
// since the driving thread may be blocked where it never polls (the order nccl-tests uses: the
// thread that owns the communicators aborts them).
class AbortSignal {
 public:
  // Any thread.
  void request() noexcept { requested_.store(true, std::memory_order_release); }
  [[nodiscard]] bool requested() const noexcept {
    return requested_.load(std::memory_order_acquire);
  }

  // The driving thread, once its communicators are aborted (asked for or not).
  void mark_done() noexcept {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_changed_.notify_all();
  }

  // The requester: true as soon as the abort is done, false when `seconds` passed first.
  [[nodiscard]] bool wait_done(double seconds) {
    std::unique_lock lock(mutex_);
    return done_changed_.wait_for(lock, std::chrono::duration<double>(seconds),
                                  [this] { return done_; });
  }

 private:
  std::atomic<bool> requested_{false};
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
};

}  // namespace commcert
