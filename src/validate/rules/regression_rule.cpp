#include <fmt/format.h>

#include "validate/fleet_stats.hpp"
#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// Relative to the baseline's expected value, as SuperBench's variance rules (5 % for bandwidth
// and throughput).
class RegressionRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.regression"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    for_each_bounded_series(context, [&](const MetricSeries& series, const Bound& bound) {
      if (!bound.expected || !bound.max_regression_pct) return;
      const bool higher = series.info.direction == Direction::kHigherIsBetter;
      const double allowed = *bound.max_regression_pct;
      const double threshold =
          *bound.expected * (higher ? 1.0 - allowed / 100 : 1.0 + allowed / 100);
      for (const auto& sample : series.samples) {
        const double pct = shortfall_pct(sample.value, *bound.expected, higher);
        if (pct <= allowed) continue;
        limit_violation(context, out, "perf.regression", id(),
                        fmt::format("{}% off the expected {}", format_figure(allowed),
                                    format_figure(*bound.expected)),
                        series, sample, threshold);
        Finding& f = out.back();
        f.fields.emplace_back("pct", format_figure(pct));
        f.fields.emplace_back("expected", format_figure(*bound.expected));
        if (f.code == "perf.regression") set_field(f, "limit", format_figure(allowed));
      }
    });
  }
};

}  // namespace

std::unique_ptr<Rule> make_regression_rule() {
  return std::make_unique<RegressionRule>();
}

}  // namespace commcert::rules
