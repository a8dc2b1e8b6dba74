#include <cmath>

#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// Exact values, such as a port's negotiated rate: 200 Gb/s on a 400 Gb/s fabric is a fault
// even though it clears any sensible floor of "working".
class EqualityRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.equality"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    for_each_bounded_series(context, [&](const MetricSeries& series, const Bound& bound) {
      if (!bound.equals) return;
      const double tolerance = 1e-9 * std::max(1.0, std::abs(*bound.equals));
      for (const auto& sample : series.samples) {
        if (std::abs(sample.value - *bound.equals) > tolerance) {
          limit_violation(context, out, "perf.not_equal", id(), "the required value", series,
                          sample, *bound.equals);
        }
      }
    });
  }
};

}  // namespace

std::unique_ptr<Rule> make_equality_rule() {
  return std::make_unique<EqualityRule>();
}

}  // namespace commcert::rules
