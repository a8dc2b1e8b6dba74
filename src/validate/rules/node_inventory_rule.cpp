#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// A node that shows fewer GPUs than its SKU has lost one (AzNHC's NHC2009 MissingGpu); one with
// fewer IB ports has lost an HCA.
class NodeInventoryRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.node_inventory"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const Baseline& baseline = context.baseline;
    for (const auto& r : context.evidence.node_health) {
      if (r.status != RecordStatus::kOk) continue;
      if (baseline.gpus_per_node && r.gpu_count && *r.gpu_count != *baseline.gpus_per_node) {
        out.push_back(make(context, "health.gpu_count", r, *r.gpu_count, *baseline.gpus_per_node));
      }
      if (baseline.ib_ports_per_node && r.ib_port_count &&
          *r.ib_port_count < *baseline.ib_ports_per_node) {
        out.push_back(make(context, "health.ib_port_count", r, *r.ib_port_count,
                           *baseline.ib_ports_per_node));
      }
    }
  }

 private:
  Finding make(const JudgeContext& context, ReasonCode code, const NodeHealthEvidence& r, int found,
               int expected) const {
    Finding f = gpu_finding(context.evidence, code, id(), "health.node", r.node, {}, r.ref);
    f.measured = found;
    f.limit = expected;
    f.fields.emplace_back("found", std::to_string(found));
    f.fields.emplace_back("limit", std::to_string(expected));
    return f;
  }
};

}  // namespace

std::unique_ptr<Rule> make_node_inventory_rule() {
  return std::make_unique<NodeInventoryRule>();
}

}  // namespace commcert::rules
