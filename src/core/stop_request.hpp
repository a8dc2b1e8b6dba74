#pragma once

#include <atomic>
#include <csignal>

namespace commcert {

// The process's one stop request. SIGINT or SIGTERM during a stage (inside an
// InterruptsRequestStop) sets it; the stage finishes the step it is in (a sweep's row, a burn
// window), writes what it measured and ends with interrupted status, instead of dying with its
// records half-written. Once set it stays set: a later stage of the same process stops at its
// first step boundary too.
[[nodiscard]] std::atomic<bool>& stop_request();

// While alive, SIGINT and SIGTERM set stop_request() instead of ending the process; the handlers
// in place before are restored afterwards.
class InterruptsRequestStop {
 public:
  InterruptsRequestStop();
  ~InterruptsRequestStop();
  InterruptsRequestStop(const InterruptsRequestStop&) = delete;
  InterruptsRequestStop& operator=(const InterruptsRequestStop&) = delete;

 private:
  struct sigaction previous_interrupt_ {};
  struct sigaction previous_terminate_ {};
};

}  // namespace commcert
