#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// DCGM and AzNHC: any uncorrectable ECC error since the last reset fails; correctable errors
// are worth watching only in large numbers.
class GpuEccRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.gpu_ecc"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const auto& limits = context.baseline.gpu_health;
    for (const auto& r : context.evidence.gpu_health) {
      if (r.status != RecordStatus::kOk) continue;
      if (r.ecc_volatile_uncorrected &&
          *r.ecc_volatile_uncorrected > limits.max_uncorrectable_ecc) {
        add(context, out, "health.ecc_uncorrectable", r, *r.ecc_volatile_uncorrected,
            limits.max_uncorrectable_ecc);
      }
      if (limits.max_correctable_ecc && r.ecc_volatile_corrected &&
          *r.ecc_volatile_corrected > *limits.max_correctable_ecc) {
        add(context, out, "health.ecc_correctable", r, *r.ecc_volatile_corrected,
            *limits.max_correctable_ecc);
      }
    }
  }

 private:
  void add(const JudgeContext& context, std::vector<Finding>& out, ReasonCode code,
           const GpuHealthEvidence& r, std::int64_t count, std::int64_t limit) const {
    Finding f = gpu_finding(context.evidence, code, id(), "health.gpu", r.node, r.gpu, r.ref);
    f.measured = static_cast<double>(count);
    f.limit = static_cast<double>(limit);
    f.unit = "errors";
    f.fields.emplace_back("count", std::to_string(count));
    f.fields.emplace_back("limit", std::to_string(limit));
    out.push_back(std::move(f));
  }
};

}  // namespace

std::unique_ptr<Rule> make_gpu_ecc_rule() {
  return std::make_unique<GpuEccRule>();
}

}  // namespace commcert::rules
