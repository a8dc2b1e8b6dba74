#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// Absolute ceiling, for figures where more is worse (temperature).
class CeilingRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.ceiling"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    for_each_bounded_series(context, [&](const MetricSeries& series, const Bound& bound) {
      if (!bound.ceiling) return;
      for (const auto& sample : series.samples) {
        if (sample.value > *bound.ceiling) {
          limit_violation(context, out, "perf.above_ceiling", id(), "the ceiling", series, sample,
                          *bound.ceiling);
        }
      }
    });
  }
};

}  // namespace

std::unique_ptr<Rule> make_ceiling_rule() {
  return std::make_unique<CeilingRule>();
}

}  // namespace commcert::rules
