#pragma once

#include <condition_variable>
#include <mutex>

#include "core/clock.hpp"

namespace commcert {

// Lines up worker threads so they start together: workers arrive() when ready (or when they
// gave up), the coordinator waits for all of them, then releases them with go or stop.
class StartLine {
 public:
  explicit StartLine(int workers) : waiting_for_(workers) {}

  void arrive() {
    std::lock_guard lock(mutex_);
    --waiting_for_;
    changed_.notify_all();
  }

  // True when every worker arrived before the deadline.
  bool wait_all(const Deadline& deadline) {
    std::unique_lock lock(mutex_);
    const auto ready = [this] { return waiting_for_ <= 0; };
    if (deadline.is_never()) {
      changed_.wait(lock, ready);
      return true;
    }
    return changed_.wait_until(lock, deadline.time_point(), ready);
  }

  void release(bool go) {
    std::lock_guard lock(mutex_);
    released_ = true;
    go_ = go;
    changed_.notify_all();
  }

  // Blocks until released; returns whether to go. A worker arriving after a release that did
  // not wait for it (it was too late) is told to stop.
  bool wait_release(bool arrived_late) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return released_; });
    return go_ && !arrived_late;
  }

  [[nodiscard]] bool released() {
    std::lock_guard lock(mutex_);
    return released_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int waiting_for_;
  bool released_ = false;
  bool go_ = false;
};

}  // namespace commcert
