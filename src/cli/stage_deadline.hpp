#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace commcert {

// Bounds one stage of `commcert run` by its budget. Stages bound each operation themselves (-T);
// this bounds the sum, so a suite cannot run past what its budgets promise. When the budget is
// spent, `on_expiry` runs on the guard's thread (it records why and ends the process: a stage
// stuck in a collective cannot be unwound from outside).
class StageDeadline {
 public:
  StageDeadline(double budget_s, std::function<void()> on_expiry);
  ~StageDeadline();  // cancels
  StageDeadline(const StageDeadline&) = delete;
  StageDeadline& operator=(const StageDeadline&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool cancelled_ = false;
  std::thread thread_;
};

}  // namespace commcert
