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

struct DerivedMetric {
  std::string metric;
  std::string unit;
  std::size_t subjects = 0;          // figures offered
  std::vector<std::string> dropped;  // "node3 gpu 2": outliers left out of the mean
  std::size_t iterations = 0;
  double expected = 0;
};

struct Derivation {
  Baseline baseline;
  std::vector<DerivedMetric> metrics;
  std::vector<std::string> excluded_nodes;  // failed hardware or correctness checks: not peers
  std::string yaml;                         // the file to write, with provenance comments
};

// A baseline from a known-good fleet run, SuperBench's fix_threshold way: per metric, take the
// mean of the figures, drop those more than outlier_pct worse than it, recompute, until nothing
// is dropped; the mean is `expected` and the floor is a margin below it. Nodes the template's
// hardware and correctness rules quarantine are left out first. Health limits, required checks
// and node shape come from the template (DCGM-grade defaults without one); without a template
// every check with evidence is required. Throws UsageError when no figure can be derived.
[[nodiscard]] Derivation derive_baseline(const Evidence& evidence,
                                         const Baseline& template_baseline,
                                         const DerivationOptions& options);

}  // namespace commcert
