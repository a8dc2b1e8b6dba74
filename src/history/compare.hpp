#pragma once

#include <optional>
#include <string>
#include <vector>

#include "history/run_summary.hpp"
#include "history/significance.hpp"

namespace commcert {

// How a figure moved from the baseline (A) to the candidate (B). Order: how `compare` lists them.
enum class ChangeKind {
  kRegression,    // dropped by the threshold or more, and significantly so
  kUntestedDrop,  // dropped by the threshold or more; no per-iteration data to test it
  kLost,          // in A, absent from B: the evidence went missing
  kImprovement,   // rose by the threshold or more (significant, or untestable)
  kNoise,         // moved by the threshold or more, but not significantly
  kUnchanged,     // moved by less than the threshold
  kNew,           // in B only
};

[[nodiscard]] const char* change_kind_name(ChangeKind kind);

// Regressions and untested drops fail a CI gate (exit 1); everything else does not.
[[nodiscard]] bool fails_gate(ChangeKind kind);

struct CompareOptions {
  double threshold_pct = 5.0;  // the smallest relative change that counts, inclusive
};

struct MetricChange {
  std::optional<RunFigure> a;
  std::optional<RunFigure> b;
  double change_pct = 0;  // 100 * (b - a) / a; 0 when either side is missing
  std::optional<WelchResult> test;
  ChangeKind kind = ChangeKind::kUnchanged;
  [[nodiscard]] const RunFigure& either() const { return b ? *b : *a; }
};

// Pairs the figures of A and B by key and judges each pair (docs/history.md). The result is
// sorted: regressions (largest drop first), untested drops, lost, improvements, noise,
// unchanged, new.
[[nodiscard]] std::vector<MetricChange> compare_metrics(const std::vector<RunFigure>& a,
                                                        const std::vector<RunFigure>& b,
                                                        const CompareOptions& options);

// The judgement of one pair of figures, exposed for tests of the thresholds.
[[nodiscard]] MetricChange judge_change(const RunFigure& a, const RunFigure& b,
                                        const CompareOptions& options);

}  // namespace commcert
