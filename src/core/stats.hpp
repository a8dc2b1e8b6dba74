#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace commcert {

// Summary of a sample of timings. Percentiles are nearest-rank (p99 of fewer than 100 samples is
// the maximum), as nccl-tests reports them, so the two tools agree on the same samples.
struct SampleSummary {
  std::size_t count = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double median = 0;
  double p99 = 0;
  double stddev = 0;  // sample standard deviation (n - 1)
  double cv = 0;      // stddev / mean; 0 when mean is 0
};

// Throws std::invalid_argument on an empty sample.
[[nodiscard]] SampleSummary summarize(std::span<const double> samples);

// Nearest-rank percentile of an ascending-sorted, non-empty sample; p in [0, 100].
[[nodiscard]] double percentile_sorted(std::span<const double> sorted, double p);

// Median of a non-empty sample (mean of the two middle values for even sizes).
[[nodiscard]] double median(std::span<const double> samples);

// Half-width of the two-sided 95 % confidence interval of the mean (Student t), or nullopt for
// fewer than two samples.
[[nodiscard]] std::optional<double> ci95_half_width(const SampleSummary& summary);

// Two-sided 95 % Student t quantile for `degrees_of_freedom` >= 1.
[[nodiscard]] double student_t95(std::size_t degrees_of_freedom);

}  // namespace commcert
