#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// Absolute floor: below it the part cannot do the work it was bought for (AzNHC, DCGM SKU
// limits).
class FloorRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.floor"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    for_each_bounded_series(context, [&](const MetricSeries& series, const Bound& bound) {
      if (!bound.floor) return;
      for (const auto& sample : series.samples) {
        if (sample.value < *bound.floor) {
          limit_violation(context, out, "perf.below_floor", id(), "the floor", series, sample,
                          *bound.floor);
        }
      }
    });
  }
};

}  // namespace

std::unique_ptr<Rule> make_floor_rule() {
  return std::make_unique<FloorRule>();
}

}  // namespace commcert::rules
