#include <fmt/format.h>

#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// A GPU that computes a different answer from its own earlier result, or from its peers, is
// broken whatever its speed. A burn record that says `fail` for another reason still fails.
class BurnCorrectnessRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.burn_correctness"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const Evidence& evidence = context.evidence;
    for (const auto& r : evidence.burns) {
      const auto base = [&](ReasonCode code) {
        Finding f;
        f.code = code;
        f.node = r.node;
        f.check = "burn";
        f.rule = std::string(id());
        f.gpu = r.gpu;
        f.evidence.push_back(r.ref);
        f.fields = {{"where", gpu_where(evidence, r.gpu)},
                    {"check", "burn"},
                    {"kernel", std::string(evidence.text(r.kernel))}};
        return f;
      };
      bool explained = false;
      if (r.miscompares > 0) {
        Finding f = base("burn.miscompare");
        f.measured = static_cast<double>(r.miscompares);
        f.limit = 0;
        f.unit = "elements";
        f.fields.emplace_back("count", std::to_string(r.miscompares));
        out.push_back(std::move(f));
        explained = true;
      }
      if (r.peer_mismatch.value_or(false)) {
        Finding f = base("burn.peer_mismatch");
        f.fields.emplace_back("peers", std::to_string(r.peer_gpus));
        out.push_back(std::move(f));
        explained = true;
      }
      if (r.status == RecordStatus::kFail && !explained) {
        Finding f = base("stage.fail");
        f.fields.emplace_back("detail", r.reason.empty() ? "no reason given" : r.reason);
        out.push_back(std::move(f));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_burn_correctness_rule() {
  return std::make_unique<BurnCorrectnessRule>();
}

}  // namespace commcert::rules
