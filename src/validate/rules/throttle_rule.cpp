#include <algorithm>

#include <fmt/format.h>

#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// Throttling other than power capping is written down, never a quarantine on its own (azurehpc
// PR #591): a throttled GPU that is too slow fails its performance bounds anyway.
class ThrottleRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.throttle"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const auto& allowed = context.baseline.gpu_health.allowed_clock_events;
    const Evidence& evidence = context.evidence;
    const auto is_allowed = [&](StringId reason) {
      return std::find(allowed.begin(), allowed.end(), evidence.text(reason)) != allowed.end();
    };
    for (const auto& r : evidence.gpu_health) {
      if (r.status != RecordStatus::kOk) continue;
      std::vector<std::string> reasons;
      for (const StringId reason : r.clock_events) {
        if (!is_allowed(reason)) reasons.emplace_back(evidence.text(reason));
      }
      if (!reasons.empty()) add(context, out, r.node, r.gpu, r.ref, "health.gpu", join(reasons));
    }
    for (const auto& r : evidence.burns) {
      std::vector<std::string> reasons;
      for (const auto& t : r.throttle) {
        if (t.seconds > 0 && !is_allowed(t.reason)) {
          reasons.push_back(fmt::format("{} {} s during burn", evidence.text(t.reason),
                                        format_figure(t.seconds)));
        }
      }
      if (!reasons.empty()) add(context, out, r.node, r.gpu, r.ref, "burn", join(reasons));
    }
  }

 private:
  void add(const JudgeContext& context, std::vector<Finding>& out, NodeId node, const GpuKey& gpu,
           EvidenceRef ref, std::string_view check, std::string reasons) const {
    Finding f = gpu_finding(context.evidence, "health.throttle", id(), check, node, gpu, ref);
    f.fields.emplace_back("reasons", std::move(reasons));
    out.push_back(std::move(f));
  }
};

}  // namespace

std::unique_ptr<Rule> make_throttle_rule() {
  return std::make_unique<ThrottleRule>();
}

}  // namespace commcert::rules
