#pragma once

#include <optional>

#include "history/run_summary.hpp"

namespace commcert {

// Welch's unequal-variance t test on two samples' moments (docs/history.md "When a change is
// significant"): t = (mean_b - mean_a) / sqrt(s_a^2/n_a + s_b^2/n_b), degrees of freedom by
// Welch-Satterthwaite, rounded down (a slightly wider, conservative interval).
struct WelchResult {
  double t = 0;
  double degrees_of_freedom = 0;
  double critical_t = 0;  // two-sided 95 % Student t at the rounded-down degrees of freedom
  [[nodiscard]] bool significant() const;
};

// nullopt when either side has fewer than two iterations (no variance to test against). Two
// samples without any spread at all are significant as soon as their means differ.
[[nodiscard]] std::optional<WelchResult> welch_t_test(const SampleMoments& a,
                                                      const SampleMoments& b);

}  // namespace commcert
