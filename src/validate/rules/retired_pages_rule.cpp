#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// Pre-Ampere GPUs retire pages; DCGM fails at 63 retired pages, and a pending retirement is
// applied by the next reset.
constexpr GpuCountLimit kMaxRetiredPages{"max_retired_pages",
                                         62};  // DCGM: >= 63 retired pages fail
constexpr GpuCountLimit kLimits[] = {kMaxRetiredPages};

class RetiredPagesRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.retired_pages"; }
  std::span<const GpuCountLimit> gpu_limits() const override { return kLimits; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const auto max = context.baseline.gpu_health.count(kMaxRetiredPages);
    for (const auto& r : context.evidence.gpu_health) {
      if (r.status != RecordStatus::kOk) continue;
      const std::int64_t total =
          r.retired_single_bit.value_or(0) + r.retired_double_bit.value_or(0);
      if (total > max) {
        Finding f = gpu_finding(context.evidence, "health.retired_pages", id(), "health.gpu",
                                r.node, r.gpu, r.ref);
        f.measured = static_cast<double>(total);
        f.limit = static_cast<double>(max);
        f.unit = "pages";
        f.fields.emplace_back("count", std::to_string(total));
        f.fields.emplace_back("limit", std::to_string(max));
        f.fields.emplace_back("detail", "");
        out.push_back(std::move(f));
      }
      if (r.retired_pending.value_or(false)) {
        Finding f = gpu_finding(context.evidence, "health.retired_pending", id(), "health.gpu",
                                r.node, r.gpu, r.ref);
        out.push_back(std::move(f));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_retired_pages_rule() {
  return std::make_unique<RetiredPagesRule>();
}

}  // namespace commcert::rules
