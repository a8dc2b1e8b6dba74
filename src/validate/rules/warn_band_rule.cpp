#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// AzNHC's warn band: within a few % of the floor the node passes but is written down, so a
// part drifting towards its floor is seen before it fails.
class WarnBandRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.warn_band"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    for_each_bounded_series(context, [&](const MetricSeries& series, const Bound& bound) {
      if (!bound.warn_band_pct) return;
      const double band = *bound.warn_band_pct / 100.0;
      for (const auto& sample : series.samples) {
        const double v = sample.value;
        if (bound.floor && v >= *bound.floor && v < *bound.floor * (1.0 + band)) {
          warn(context, out, series, sample, *bound.floor, "floor", *bound.warn_band_pct);
        } else if (bound.ceiling && v <= *bound.ceiling && v > *bound.ceiling * (1.0 - band)) {
          warn(context, out, series, sample, *bound.ceiling, "ceiling", *bound.warn_band_pct);
        }
      }
    });
  }

 private:
  void warn(const JudgeContext& context, std::vector<Finding>& out, const MetricSeries& series,
            const MetricSample& sample, double limit, std::string_view which, double band) const {
    Finding f = metric_finding(context, "perf.warn_band", id(), series, sample, limit);
    f.fields.emplace_back("band", format_figure(band));
    f.fields.emplace_back("bound", std::string(which));
    out.push_back(std::move(f));
  }
};

}  // namespace

std::unique_ptr<Rule> make_warn_band_rule() {
  return std::make_unique<WarnBandRule>();
}

}  // namespace commcert::rules
