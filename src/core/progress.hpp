#pragma once

#include <cstdio>
#include <string>

#include "core/clock.hpp"

namespace commcert {

// Progress of a long run on stderr: what is running, how far along, elapsed time and ETA.
// Rank 0 only, at most one line a second (and always at the last step), silent when disabled.
// The ETA extrapolates elapsed time over work units, which callers weight by expected cost.
class ProgressReporter {
 public:
  ProgressReporter(bool enabled, std::string stage, double total_work, std::FILE* out = stderr);

  void advance(double work_done, const std::string& current);
  void finish(const std::string& summary);
  [[nodiscard]] double elapsed_seconds() const;

 private:
  bool enabled_;
  std::string stage_;
  double total_work_;
  double done_work_ = 0;
  std::FILE* out_;
  SteadyClock::time_point start_;
  SteadyClock::time_point last_print_;
};

}  // namespace commcert
