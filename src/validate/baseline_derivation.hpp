#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "validate/baseline.hpp"
#include "validate/evidence.hpp"

namespace commcert {

struct DerivationOptions {
  std::string sku;                 // empty: the template's, else "derived"
  double floor_margin_pct = 10.0;  // floor = expected minus this (ceiling: plus)
  double outlier_pct = 5.0;        // subjects this far worse than the running mean are dropped
  std::optional<double> warn_band_pct = 5.0;
  std::optional<double> max_regression_pct;
  std::optional<std::uint64_t> min_bytes;  // collective sizes to derive busbw from
  std::string source;                      // what was read, for the file's header comment
};

// Spread across runs (docs/baselines.md, "From several runs"): each run's mean of the kept
// figures; the limit is kRunSigmas of their standard deviation beyond expected when that is
// further than the margin. A run-to-run or figure-to-figure coefficient of variation above
// kHighSpreadCv is warned about, as is a baseline from one run.
inline constexpr double kRunSigmas = 3.0;
inline constexpr double kHighSpreadCv = 0.10;

struct DerivedMetric {
  std::string metric;
  std::string unit;
  std::size_t subjects = 0;          // figures offered
  std::vector<std::string> dropped;  // "node3 gpu 2": outliers left out of the mean
  std::size_t iterations = 0;
  double expected = 0;
  std::size_t runs = 0;              // runs the kept figures came from
  std::optional<double> run_spread;  // standard deviation of the runs' means (2 runs or more)
  double figure_cv = 0;              // coefficient of variation of the kept figures
  std::vector<std::string> warnings;
};

struct Derivation {
  Baseline baseline;
  std::vector<DerivedMetric> metrics;
  std::vector<std::string> excluded_nodes;  // failed hardware or correctness checks: not peers
  std::string yaml;                         // the file to write, with provenance comments
};

// A baseline from known-good fleet runs, SuperBench's fix_threshold way: per metric, take the
// mean of the figures, drop those more than outlier_pct worse than it, recompute, until nothing
// is dropped; the mean is `expected` and the floor is a margin below it, or kRunSigmas standard
// deviations of the runs' means below it when several runs say the margin is too tight. Nodes the
// template's hardware and correctness rules quarantine are left out first. Health limits, required
// checks and node shape come from the template (DCGM-grade defaults without one); without a
// template every check with evidence is required. Throws UsageError when no figure can be derived.
[[nodiscard]] Derivation derive_baseline(const Evidence& evidence,
                                         const Baseline& template_baseline,
                                         const DerivationOptions& options);

}  // namespace commcert
