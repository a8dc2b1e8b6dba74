#include "validate/baseline_derivation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/record.hpp"
#include "core/units.hpp"
#include "validate/checks.hpp"
#include "validate/finding.hpp"
#include "validate/fleet_stats.hpp"
#include "validate/metrics.hpp"
#include "validate/p2p_derivation.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

std::string subject_name(const Evidence& evidence, const MetricSample& s) {
  std::string name = evidence.node_name(s.node);
  if (s.gpu.index >= 0) name += fmt::format(" gpu {}", s.gpu.index);
  if (s.device != kNoString) name += fmt::format(" {} port {}", evidence.text(s.device), s.port);
  if (!s.attributable && s.run != kNoString) {
    name = fmt::format("run {}", evidence.text(evidence.runs[s.run].run_id));
  }
  return name;
}

// Nodes the template's hardware and correctness rules quarantine are not peers to learn from.
std::set<std::string> broken_nodes(const Evidence& evidence, const Baseline& template_baseline) {
  Baseline limits_only = template_baseline;
  limits_only.bounds.clear();
  const FleetVerdict verdict = judge(evidence, limits_only, nullptr);
  std::set<std::string> broken;
  for (const auto& node : verdict.nodes) {
    if (node.state == NodeState::kQuarantined) broken.insert(node.node);
  }
  return broken;
}

std::optional<int> most_common(const std::map<NodeId, std::set<std::int64_t>>& per_node) {
  std::map<std::size_t, std::size_t> counts;
  for (const auto& [node, items] : per_node)
    ++counts[items.size()];
  if (counts.empty()) return std::nullopt;
  const auto best =
      std::max_element(counts.begin(), counts.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  return static_cast<int>(best->first);
}

struct RunSpread {
  std::size_t runs = 0;
  std::optional<double> stddev;  // of the runs' means; two runs or more
  double figure_cv = 0;
};

// How much the kept figures vary between runs, and among themselves.
RunSpread run_spread(const std::vector<const MetricSample*>& kept, double mean) {
  RunSpread out;
  std::map<std::uint64_t, std::pair<double, std::size_t>> per_run;
  double squares = 0;
  for (const MetricSample* s : kept) {
    auto& [sum, count] = per_run[sample_origin(*s)];
    sum += s->value;
    ++count;
    squares += (s->value - mean) * (s->value - mean);
  }
  out.runs = per_run.size();
  if (kept.size() > 1 && mean != 0) {
    out.figure_cv = std::sqrt(squares / static_cast<double>(kept.size() - 1)) / std::abs(mean);
  }
  if (per_run.size() < 2) return out;
  std::vector<double> means;
  means.reserve(per_run.size());
  for (const auto& [run, total] : per_run)
    means.push_back(total.first / static_cast<double>(total.second));
  const double centre =
      std::accumulate(means.begin(), means.end(), 0.0) / static_cast<double>(means.size());
  double deviations = 0;
  for (const double m : means)
    deviations += (m - centre) * (m - centre);
  out.stddev = std::sqrt(deviations / static_cast<double>(means.size() - 1));
  return out;
}

// One figure per subject of the fleet; a figure shared by a run's nodes counts once.
std::vector<const MetricSample*> fleet_figures(const MetricSeries& series, const Evidence& evidence,
                                               const std::set<std::string>& broken) {
  std::vector<const MetricSample*> figures;
  std::set<std::uint32_t> runs;
  for (const auto& s : series.samples) {
    if (broken.count(evidence.node_name(s.node))) continue;
    if (!s.attributable && !runs.insert(s.run).second) continue;
    figures.push_back(&s);
  }
  return figures;
}

// SuperBench's fix_threshold: drops from `kept` the figures more than outlier_pct worse than the
// running mean until none is, naming them in `derived`; returns the final mean.
double mean_without_outliers(std::vector<const MetricSample*>& kept, bool higher,
                             const Evidence& evidence, const DerivationOptions& options,
                             DerivedMetric& derived) {
  double mean = 0;
  while (true) {
    ++derived.iterations;
    mean = std::accumulate(kept.begin(), kept.end(), 0.0,
                           [](double sum, const MetricSample* s) { return sum + s->value; }) /
           static_cast<double>(kept.size());
    const auto worse = [&](const MetricSample* s) {
      return shortfall_pct(s->value, mean, higher) > options.outlier_pct;
    };
    const auto split =
        std::stable_partition(kept.begin(), kept.end(), [&](auto* s) { return !worse(s); });
    if (split == kept.end() || split == kept.begin()) break;  // nothing (or everything) to drop
    for (auto it = split; it != kept.end(); ++it)
      derived.dropped.push_back(subject_name(evidence, **it));
    kept.erase(split, kept.end());
  }
  return mean;
}

// The limit below (above) `expected`: the margin, or kRunSigmas standard deviations of the runs'
// means where that is further. `spread_decides` says which.
Bound derived_bound(const DerivedMetric& derived, const RunSpread& spread, bool higher,
                    const Baseline& b, const DerivationOptions& options, bool& spread_decides) {
  Bound bound;
  bound.fleet = b.fleet;
  bound.expected = derived.expected;
  const double margin = options.floor_margin_pct / 100.0;
  const double runs_allow = kRunSigmas * spread.stddev.value_or(0);
  spread_decides = runs_allow > derived.expected * margin;
  if (higher) {
    bound.floor = round_figure(
        std::max(0.0, std::min(derived.expected * (1.0 - margin), derived.expected - runs_allow)));
  } else {
    bound.ceiling =
        round_figure(std::max(derived.expected * (1.0 + margin), derived.expected + runs_allow));
  }
  bound.warn_band_pct = options.warn_band_pct;
  bound.max_regression_pct = options.max_regression_pct;
  return bound;
}

std::vector<std::string> spread_warnings(const RunSpread& spread, double mean) {
  std::vector<std::string> warnings;
  if (spread.runs == 1) {
    warnings.emplace_back(
        "derived from one run: how much healthy runs differ is unknown, so the limit is only "
        "the margin from this run's mean; derive from several healthy runs (--from RUN...)");
  }
  const double run_cv = spread.stddev && mean != 0 ? *spread.stddev / std::abs(mean) : 0;
  if (run_cv > kHighSpreadCv || spread.figure_cv > kHighSpreadCv) {
    warnings.push_back(fmt::format(
        "high spread (figures cv {:.1f}%, between runs cv {:.1f}%): a limit from such data "
        "passes slow nodes or fails healthy ones; find the noise before relying on it",
        100 * spread.figure_cv, 100 * run_cv));
  }
  return warnings;
}

// The comment the derived file carries on a metric's `expected`: where it came from.
std::string derivation_note(const DerivedMetric& derived, std::size_t kept, std::size_t figures,
                            const RunSpread& spread, bool spread_decides, const std::string& unit) {
  std::string note = fmt::format("mean of {} of {} figures from {} run{} ({} iteration{})", kept,
                                 figures, spread.runs, spread.runs == 1 ? "" : "s",
                                 derived.iterations, derived.iterations == 1 ? "" : "s");
  if (spread.stddev) {
    note += fmt::format("; run-to-run sd {} {}, limit from {}", format_figure(*spread.stddev), unit,
                        spread_decides ? fmt::format("{} sd", format_figure(kRunSigmas))
                                       : std::string("the margin"));
  }
  for (const auto& warning : derived.warnings)
    note += "; warning: " + warning;
  if (!derived.dropped.empty()) {
    constexpr std::size_t kNamed = 5;
    std::vector<std::string> named(derived.dropped.begin(),
                                   derived.dropped.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                                 kNamed, derived.dropped.size())));
    note += fmt::format("; dropped {}{}", fmt::join(named, ", "),
                        derived.dropped.size() > kNamed
                            ? fmt::format(" and {} more", derived.dropped.size() - kNamed)
                            : "");
  }
  return note;
}

// One metric's expected figure and limit into `b`, its note into `comments`; nullopt when the
// fleet has no figure for it.
std::optional<DerivedMetric> derive_metric(const MetricSeries& series, const Evidence& evidence,
                                           const std::set<std::string>& broken,
                                           const DerivationOptions& options, Baseline& b,
                                           std::map<std::string, std::string>& comments) {
  const std::vector<const MetricSample*> figures = fleet_figures(series, evidence, broken);
  if (figures.empty()) return std::nullopt;
  const bool higher = series.info.direction == Direction::kHigherIsBetter;
  DerivedMetric derived;
  derived.metric = series.info.id;
  derived.unit = series.info.unit;
  derived.subjects = figures.size();
  std::vector<const MetricSample*> kept = figures;
  const double mean = mean_without_outliers(kept, higher, evidence, options, derived);
  derived.expected = round_figure(mean);
  const RunSpread spread = run_spread(kept, mean);
  derived.runs = spread.runs;
  derived.run_spread = spread.stddev;
  derived.figure_cv = spread.figure_cv;
  bool spread_decides = false;
  b.bounds[series.info.id] = derived_bound(derived, spread, higher, b, options, spread_decides);
  derived.warnings = spread_warnings(spread, mean);
  comments[fmt::format("checks.{}.{}.expected", series.info.check, series.info.yaml_path)] =
      derivation_note(derived, kept.size(), figures.size(), spread, spread_decides,
                      series.info.unit);
  return derived;
}

// Without a template: require what this fleet showed, and its shape.
void require_what_the_fleet_showed(const Evidence& evidence,
                                   const std::set<std::string>& checks_with_figures, Baseline& b) {
  std::set<std::string> checks = checks_with_figures;
  for (const auto& c : evidence.collectives) {
    if (c.measured()) checks.insert(fmt::format("collective.{}", evidence.text(c.collective)));
  }
  if (!evidence.gpu_health.empty()) checks.insert("health.gpu");
  if (!evidence.ib_ports.empty()) checks.insert("health.ib");
  if (!evidence.node_health.empty()) checks.insert("health.node");
  b.required.clear();
  for (const auto& check : all_checks()) {
    if (checks.count(std::string(check.id))) b.required.emplace_back(check.id);
  }
  std::map<NodeId, std::set<std::int64_t>> gpus;
  std::map<NodeId, std::set<std::int64_t>> ports;
  for (const auto& r : evidence.burns)
    if (r.gpu.index >= 0) gpus[r.node].insert(r.gpu.index);
  for (const auto& r : evidence.membws)
    if (r.gpu.index >= 0) gpus[r.node].insert(r.gpu.index);
  for (const auto& r : evidence.gpu_health)
    if (r.gpu.index >= 0) gpus[r.node].insert(r.gpu.index);
  for (const auto& r : evidence.ib_ports)
    ports[r.node].insert((std::int64_t{r.device} << 16) + r.port);
  b.gpus_per_node = most_common(gpus);
  b.ib_ports_per_node = most_common(ports);
}

// The derived file's opening comment: how it was made, and from what.
std::string provenance_comment(const Evidence& evidence, const Baseline& template_baseline,
                               const DerivationOptions& options, std::size_t broken) {
  return fmt::format(
      "Derived by `commcert baseline` on {} from {} ({} node(s){}).\n"
      "expected = the fleet mean after dropping figures more than {}% worse than the running mean "
      "until none is (SuperBench's fix_threshold); floor = expected - {}%, or expected - {} "
      "standard deviations of the runs' means where that is further.\n"
      "Health limits and required checks: {}. Review before use.",
      utc_timestamp_now().substr(0, 10),
      options.source.empty() ? "the given results" : options.source, evidence.nodes.size(),
      broken == 0 ? ""
                  : fmt::format(", {} left out for failing hardware or correctness checks", broken),
      format_figure(options.outlier_pct), format_figure(options.floor_margin_pct),
      format_figure(kRunSigmas),
      template_baseline.path.empty() ? "DCGM-grade defaults; the checks this fleet ran"
                                     : "from the template " + template_baseline.path);
}

}  // namespace

Derivation derive_baseline(const Evidence& evidence, const Baseline& template_baseline,
                           const DerivationOptions& options) {
  Derivation out;
  Baseline& b = out.baseline;
  b = template_baseline;
  b.bounds.clear();
  b.path.clear();
  if (!options.sku.empty()) b.sku = options.sku;
  if (b.sku.empty()) b.sku = "derived";
  if (options.min_bytes) {
    for (const auto& check : all_checks()) {
      if (check.kind == CheckKind::kCollective)
        b.collectives[std::string(check.id)].min_bytes = *options.min_bytes;
    }
  }

  const std::set<std::string> broken = broken_nodes(evidence, template_baseline);
  out.excluded_nodes.assign(broken.begin(), broken.end());

  // Per subject and run: every run's figure is a figure of the fleet, and the spread between
  // runs is what the limits must allow for.
  const MetricTable metrics(evidence, b, SamplesPer::kSubjectAndRun);
  std::set<std::string> checks_with_figures;
  std::map<std::string, std::string> comments;
  for (const auto& series : metrics.series()) {
    auto derived = derive_metric(series, evidence, broken, options, b, comments);
    if (!derived) continue;
    checks_with_figures.insert(series.info.check);
    out.metrics.push_back(std::move(*derived));
  }
  if (derive_p2p_limits(evidence, broken, options.floor_margin_pct, b.p2p, comments))
    checks_with_figures.insert("p2p");
  if (out.metrics.empty() && !checks_with_figures.count("p2p")) {
    throw UsageError(
        "no figure to derive a baseline from: the results hold no measurement with "
        "a size the baseline judges (see --min-bytes)");
  }
  if (template_baseline.path.empty())
    require_what_the_fleet_showed(evidence, checks_with_figures, b);
  comments[""] = provenance_comment(evidence, template_baseline, options, broken.size());
  out.yaml = baseline_to_yaml(b, comments);
  // What we write must read back: a derived file that load_baseline rejects is a bug here.
  (void)parse_baseline(out.yaml, "derived baseline");
  return out;
}

}  // namespace commcert
