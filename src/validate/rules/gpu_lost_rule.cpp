#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// A GPU NVML reports as lost has fallen off the bus (XID 79): the health stage could not read
// it (status error), but that is a fault, not missing evidence.
class GpuLostRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.gpu_lost"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    for (const auto& r : context.evidence.gpu_health) {
      if (!r.lost) continue;
      Finding f = gpu_finding(context.evidence, "health.gpu_lost", id(), "health.gpu", r.node,
                              r.gpu, r.ref);
      f.fields.emplace_back("detail", r.reason.empty() ? "" : ": " + r.reason);
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_gpu_lost_rule() {
  return std::make_unique<GpuLostRule>();
}

}  // namespace commcert::rules
