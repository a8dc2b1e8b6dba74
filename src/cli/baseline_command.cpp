#include "cli/baseline_command.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/number_checks.hpp"
#include "core/errors.hpp"
#include "core/records_file.hpp"
#include "core/units.hpp"
#include "validate/baseline.hpp"
#include "validate/baseline_derivation.hpp"
#include "validate/finding.hpp"
#include "validate/inputs.hpp"
#include "validate/suite_baseline_lookup.hpp"

namespace commcert {

void BaselineCommand::configure(CLI::App& app) {
  app.add_option("--from", flags_.inputs,
                 "Results of a known-good fleet run (directories or records.jsonl files)")
      ->required();
  app.add_option("--out", flags_.out, "Baseline YAML to write")->required();
  app.add_option("--template", flags_.template_path,
                 "Baseline to take health limits, node shape and required checks from");
  app.add_option("--sku", flags_.sku, "SKU name of the new baseline (default: the template's)");
  app.add_option("--floor-margin-pct", flags_.floor_margin_pct, "Floor this far below expected")
      ->check(finite_range(0.0, 99.0))
      ->capture_default_str();
  app.add_option("--outlier-pct", flags_.outlier_pct,
                 "Drop figures this far below the running mean before averaging")
      ->check(finite_range(0.1, 99.0))
      ->capture_default_str();
  app.add_option("--warn-band-pct", flags_.warn_band_pct, "Warn within this % above the floor")
      ->check(finite_range(0.0, 99.0))
      ->capture_default_str();
  app.add_option("--max-regression-pct", flags_.max_regression_pct,
                 "Quarantine figures this far below expected (default: no regression rule)")
      ->check(finite_range(0.1, 99.0));
  app.add_option("--min-bytes", flags_.min_bytes,
                 "Collective sizes to derive busbw from (default: the template's, else 1G)");
  app.add_flag("--force", flags_.force, "Overwrite --out if it exists");
}

int BaselineCommand::run(Invocation& /*invocation*/) {
  if (!flags_.force && std::filesystem::exists(flags_.out)) {
    throw UsageError(fmt::format("{} exists; pass --force to replace it", flags_.out));
  }
  const Baseline template_baseline =
      flags_.template_path ? load_baseline_ref(*flags_.template_path) : Baseline{};
  DerivationOptions options;
  options.sku = flags_.sku;
  options.floor_margin_pct = flags_.floor_margin_pct;
  options.outlier_pct = flags_.outlier_pct;
  options.warn_band_pct =
      flags_.warn_band_pct > 0 ? std::optional<double>(flags_.warn_band_pct) : std::nullopt;
  options.max_regression_pct = flags_.max_regression_pct;
  if (flags_.min_bytes) options.min_bytes = parse_size(*flags_.min_bytes, "--min-bytes");
  options.source = fmt::format("{}", fmt::join(flags_.inputs, ", "));

  const LoadedInputs inputs = load_inputs(flags_.inputs);
  const Derivation derivation = derive_baseline(inputs.evidence, template_baseline, options);
  try {
    write_text_file_atomically(flags_.out, derivation.yaml);
  } catch (const RuntimeFailure& error) {
    throw UsageError(error.what());
  }

  fmt::print("commcert baseline: {} metric(s) derived for {} -> {}\n", derivation.metrics.size(),
             derivation.baseline.sku, flags_.out);
  for (const auto& m : derivation.metrics) {
    const Bound* bound = derivation.baseline.bound(m.metric);
    const std::optional<double> limit = bound->floor ? bound->floor : bound->ceiling;
    fmt::print("  {:<36} expected {:>10} {:<7} {} {:>10}  from {} figure(s) in {} run(s){}{}\n",
               m.metric, format_figure(m.expected), m.unit, bound->floor ? "floor  " : "ceiling",
               limit ? format_figure(*limit) : "-", m.subjects, m.runs,
               m.run_spread ? fmt::format(", run-to-run sd {}", format_figure(*m.run_spread)) : "",
               m.dropped.empty() ? "" : fmt::format(", {} dropped", m.dropped.size()));
  }
  // One line per distinct warning: "derived from one run" holds for every metric at once.
  std::map<std::string, std::vector<std::string>> warned;
  for (const auto& m : derivation.metrics) {
    for (const auto& warning : m.warnings)
      warned[warning].push_back(m.metric);
  }
  for (const auto& [warning, metrics] : warned) {
    constexpr std::size_t kNamed = 3;
    const std::vector<std::string> named(
        metrics.begin(),
        metrics.begin() + static_cast<std::ptrdiff_t>(std::min(kNamed, metrics.size())));
    fmt::print(stderr, "commcert baseline: warning: {}{}: {}\n", fmt::join(named, ", "),
               metrics.size() > kNamed ? fmt::format(" and {} more", metrics.size() - kNamed) : "",
               warning);
  }
  for (const auto& node : derivation.excluded_nodes) {
    fmt::print(stderr, "commcert baseline: left out {}: it fails hardware or correctness checks\n",
               node);
  }
  return to_int(ExitCode::kOk);
}

}  // namespace commcert
