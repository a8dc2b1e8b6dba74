#include <set>

#include "validate/fleet_stats.hpp"
#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// Peer-relative: a node 8 % slower than the rest of its SKU in the same run is a fault even
// when it clears the absolute floor. Flagged only when both far in % and robustly far (median
// and MAD), so healthy spread of a few % never quarantines, and only with enough nodes.
class FleetOutlierRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.fleet_outlier"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    for_each_bounded_series(context, [&](const MetricSeries& series, const Bound& bound) {
      const FleetSpec& fleet = bound.fleet;
      if (!fleet.enabled) return;
      // Each node's own figures only (MetricSeries::own): a figure several nodes share says
      // nothing about one of them, and a better shared figure does not hide a node's own.
      std::vector<double> values;
      std::set<NodeId> nodes;
      for (const auto& sample : series.own) {
        values.push_back(sample.value);
        nodes.insert(sample.node);
      }
      if (values.empty() || nodes.size() < static_cast<std::size_t>(fleet.min_nodes)) return;
      const RobustStats stats = robust_stats(values);
      const bool higher = series.info.direction == Direction::kHigherIsBetter;
      for (const auto& sample : series.own) {
        const double pct = shortfall_pct(sample.value, stats.median, higher);
        if (pct < fleet.max_deficit_pct) continue;
        const auto z = robust_z(sample.value, stats);
        // MAD 0: most of the fleet is identical, so the % test alone decides.
        if (z && std::abs(*z) < fleet.min_robust_z) continue;
        Finding f =
            metric_finding(context, "perf.fleet_outlier", id(), series, sample, stats.median);
        f.fields.emplace_back("pct", format_figure(pct));
        f.fields.emplace_back("median", format_figure(stats.median));
        f.fields.emplace_back("z", z ? format_figure(std::abs(*z)) : std::string("inf"));
        f.fields.emplace_back("nodes", std::to_string(nodes.size()));
        out.push_back(std::move(f));
      }
    });
  }
};

}  // namespace

std::unique_ptr<Rule> make_fleet_outlier_rule() {
  return std::make_unique<FleetOutlierRule>();
}

}  // namespace commcert::rules
