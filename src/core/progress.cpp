#include "core/progress.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/units.hpp"

namespace commcert {

ProgressReporter::ProgressReporter(bool enabled, std::string stage, double total_work,
                                   std::FILE* out)
    : enabled_(enabled),
      stage_(std::move(stage)),
      total_work_(std::max(total_work, 1e-9)),
      out_(out),
      start_(SteadyClock::now()),
      last_print_(start_) {}

double ProgressReporter::elapsed_seconds() const {
  return seconds_between(start_, SteadyClock::now());
}

void ProgressReporter::advance(double work_done, const std::string& current) {
  done_work_ = std::min(done_work_ + work_done, total_work_);
  if (!enabled_) return;
  const auto now = SteadyClock::now();
  const bool last = done_work_ >= total_work_;
  if (!last && seconds_between(last_print_, now) < 1.0) return;
  last_print_ = now;
  const double elapsed = seconds_between(start_, now);
  const double fraction = done_work_ / total_work_;
  const std::string eta =
      fraction > 0 ? format_duration(elapsed * (1.0 - fraction) / fraction) : std::string("?");
  fmt::print(out_, "commcert {}: {} | {:3.0f}% | elapsed {} | ETA {}\n", stage_, current,
             100.0 * fraction, format_duration(elapsed), eta);
  std::fflush(out_);
}

void ProgressReporter::finish(const std::string& summary) {
  if (!enabled_) return;
  fmt::print(out_, "commcert {}: {} in {}\n", stage_, summary, format_duration(elapsed_seconds()));
  std::fflush(out_);
}

}  // namespace commcert
