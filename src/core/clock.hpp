#pragma once

#include <chrono>
#include <limits>

namespace commcert {

using SteadyClock = std::chrono::steady_clock;

[[nodiscard]] inline double seconds_between(SteadyClock::time_point from,
                                            SteadyClock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// A point in time after which a wait gives up. Every blocking wait in commcert takes one.
class Deadline {
 public:
  [[nodiscard]] static Deadline after_seconds(double seconds) {
    if (!(seconds > 0.0)) return never();
    return Deadline(SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                             std::chrono::duration<double>(seconds)));
  }
  [[nodiscard]] static Deadline never() { return Deadline(SteadyClock::time_point::max()); }

  [[nodiscard]] bool is_never() const { return at_ == SteadyClock::time_point::max(); }
  [[nodiscard]] bool expired() const { return !is_never() && SteadyClock::now() >= at_; }
  [[nodiscard]] bool expired(SteadyClock::time_point now) const {
    return !is_never() && now >= at_;
  }
  [[nodiscard]] double remaining_seconds() const {
    if (is_never()) return std::numeric_limits<double>::infinity();
    return seconds_between(SteadyClock::now(), at_);
  }
  [[nodiscard]] SteadyClock::time_point time_point() const { return at_; }

 private:
  explicit Deadline(SteadyClock::time_point at) : at_(at) {}
  SteadyClock::time_point at_;
};

}  // namespace commcert
