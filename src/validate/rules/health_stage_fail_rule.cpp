#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// A health record that itself says `fail` is not a pass, whatever its fields show.
class HealthStageFailRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.health_stage_fail"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const Evidence& evidence = context.evidence;
    const auto add = [&](NodeId node, std::string_view check, const GpuKey& gpu,
                         const std::string& where, const std::string& reason, EvidenceRef ref) {
      Finding f;
      f.code = "stage.fail";
      f.node = node;
      f.check = std::string(check);
      f.rule = std::string(id());
      f.gpu = gpu;
      f.evidence.push_back(ref);
      f.fields = {{"where", where},
                  {"check", std::string(check)},
                  {"detail", reason.empty() ? "no reason given" : reason}};
      out.push_back(std::move(f));
    };
    for (const auto& r : evidence.gpu_health) {
      if (r.status == RecordStatus::kFail) {
        add(r.node, "health.gpu", r.gpu, gpu_where(evidence, r.gpu), r.reason, r.ref);
      }
    }
    for (const auto& r : evidence.ib_ports) {
      if (r.status == RecordStatus::kFail) {
        add(r.node, "health.ib", {}, std::string(evidence.text(r.device)) + ": ", r.reason, r.ref);
      }
    }
    for (const auto& r : evidence.node_health) {
      if (r.status == RecordStatus::kFail) add(r.node, "health.node", {}, "", r.reason, r.ref);
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_health_stage_fail_rule() {
  return std::make_unique<HealthStageFailRule>();
}

}  // namespace commcert::rules
