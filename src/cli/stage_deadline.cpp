#include "cli/stage_deadline.hpp"

#include <chrono>

namespace commcert {

StageDeadline::StageDeadline(double budget_s, std::function<void()> on_expiry) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(budget_s));
  thread_ = std::thread([this, deadline, on_expiry = std::move(on_expiry)] {
    std::unique_lock lock(mutex_);
    if (wake_.wait_until(lock, deadline, [this] { return cancelled_; })) return;
    lock.unlock();
    on_expiry();
  });
}

StageDeadline::~StageDeadline() {
  {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace commcert
