#include "core/stop_request.hpp"

namespace commcert {
namespace {

// Lock-free, so setting it from a signal handler is async-signal-safe.
std::atomic<bool> g_stop_request{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void set_stop_request(int /*signal*/) {
  g_stop_request.store(true);
}

}  // namespace

std::atomic<bool>& stop_request() {
  return g_stop_request;
}

InterruptsRequestStop::InterruptsRequestStop() {
  struct sigaction action {};
  action.sa_handler = set_stop_request;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous_interrupt_);
  sigaction(SIGTERM, &action, &previous_terminate_);
}

InterruptsRequestStop::~InterruptsRequestStop() {
  sigaction(SIGINT, &previous_interrupt_, nullptr);
  sigaction(SIGTERM, &previous_terminate_, nullptr);
}

}  // namespace commcert
