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
#include "validate/validator.hpp"

namespace commcert {
namespace {

// Four significant digits: a baseline states expectations, not measurement noise.
double round_figure(double value) {
  if (value == 0) return 0;
  const double digits = 4 - std::ceil(std::log10(std::abs(value)));
  const double scale = std::pow(10.0, digits);
  return std::round(value * scale) / scale;
}

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

  const MetricTable metrics(evidence, b);
  std::set<std::string> checks_with_figures;
  std::map<std::string, std::string> comments;
  for (const auto& series : metrics.series()) {
    // One figure per subject; a figure shared by a run's nodes counts once.
    std::vector<const MetricSample*> figures;
    std::set<std::uint32_t> runs;
    for (const auto& s : series.samples) {
      if (broken.count(evidence.node_name(s.node))) continue;
      if (!s.attributable && !runs.insert(s.run).second) continue;
      figures.push_back(&s);
    }
    if (figures.empty()) continue;
    const bool higher = series.info.direction == Direction::kHigherIsBetter;
    DerivedMetric derived{series.info.id, series.info.unit, figures.size(), {}, 0, 0};
    std::vector<const MetricSample*> kept = figures;
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
    derived.expected = round_figure(mean);

    Bound bound;
    bound.fleet = b.fleet;
    bound.expected = derived.expected;
    const double margin = options.floor_margin_pct / 100.0;
    if (higher) {
      bound.floor = round_figure(derived.expected * (1.0 - margin));
    } else {
      bound.ceiling = round_figure(derived.expected * (1.0 + margin));
    }
    bound.warn_band_pct = options.warn_band_pct;
    bound.max_regression_pct = options.max_regression_pct;
    b.bounds[series.info.id] = bound;
    checks_with_figures.insert(series.info.check);

    std::string note =
        fmt::format("mean of {} of {} figures ({} iteration{})", kept.size(), figures.size(),
                    derived.iterations, derived.iterations == 1 ? "" : "s");
    if (!derived.dropped.empty()) {
      constexpr std::size_t kNamed = 5;
      std::vector<std::string> named(
          derived.dropped.begin(), derived.dropped.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                                 kNamed, derived.dropped.size())));
      note += fmt::format("; dropped {}{}", fmt::join(named, ", "),
                          derived.dropped.size() > kNamed
                              ? fmt::format(" and {} more", derived.dropped.size() - kNamed)
                              : "");
    }
    comments[fmt::format("checks.{}.{}.expected", series.info.check, series.info.yaml_path)] = note;
    out.metrics.push_back(std::move(derived));
  }
  if (out.metrics.empty()) {
    throw UsageError(
        "no figure to derive a baseline from: the results hold no measurement with "
        "a size the baseline judges (see --min-bytes)");
  }

  if (template_baseline.path.empty()) {
    // No template: require what this fleet showed, and its shape.
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

  comments[""] = fmt::format(
      "Derived by `commcert baseline` on {} from {} ({} node(s){}).\n"
      "expected = the fleet mean after dropping figures more than {}% worse than the running mean "
      "until none is (SuperBench's fix_threshold); floor = expected - {}%.\n"
      "Health limits and required checks: {}. Review before use.",
      utc_timestamp_now().substr(0, 10),
      options.source.empty() ? "the given results" : options.source, evidence.nodes.size(),
      broken.empty()
          ? ""
          : fmt::format(", {} left out for failing hardware or correctness checks", broken.size()),
      format_figure(options.outlier_pct), format_figure(options.floor_margin_pct),
      template_baseline.path.empty() ? "DCGM-grade defaults; the checks this fleet ran"
                                     : "from the template " + template_baseline.path);
  out.yaml = baseline_to_yaml(b, comments);
  // What we write must read back: a derived file that load_baseline rejects is a bug here.
  (void)parse_baseline(out.yaml, "derived baseline");
  return out;
}

}  // namespace commcert
