#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// Ampere and later remap rows instead of retiring pages. A failed remap (XID 64) means the GPU
// ran out of spare rows; a pending one is applied by the next GPU reset; DCGM warns from 512
// rows remapped for uncorrectable errors.
class RowRemapRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.row_remap"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const auto warn_at = context.baseline.gpu_health.remapped_rows_warn;
    for (const auto& r : context.evidence.gpu_health) {
      if (r.status != RecordStatus::kOk) continue;
      const auto make = [&](ReasonCode code) {
        return gpu_finding(context.evidence, code, id(), "health.gpu", r.node, r.gpu, r.ref);
      };
      if (r.remap_failure.value_or(false)) out.push_back(make("health.remap_failure"));
      if (r.remap_pending.value_or(false)) out.push_back(make("health.remap_pending"));
      if (r.remap_uncorrectable && *r.remap_uncorrectable >= warn_at) {
        Finding f = make("health.remap_many");
        f.measured = static_cast<double>(*r.remap_uncorrectable);
        f.limit = static_cast<double>(warn_at);
        f.unit = "rows";
        f.fields.emplace_back("count", std::to_string(*r.remap_uncorrectable));
        f.fields.emplace_back("limit", std::to_string(warn_at));
        out.push_back(std::move(f));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_row_remap_rule() {
  return std::make_unique<RowRemapRule>();
}

}  // namespace commcert::rules
