#include <fmt/format.h>

#include "core/units.hpp"
#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// Device memory that returns a different pattern from the one written is broken memory.
class MembwIntegrityRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.membw_integrity"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const Evidence& evidence = context.evidence;
    for (const auto& r : evidence.membws) {
      Finding f;
      f.node = r.node;
      f.check = "membw";
      f.rule = std::string(id());
      f.gpu = r.gpu;
      f.evidence.push_back(r.ref);
      f.fields = {{"where", gpu_where(evidence, r.gpu)}, {"check", "membw"}};
      if (r.integrity_errors.value_or(0) > 0) {
        f.code = "membw.integrity";
        f.measured = static_cast<double>(*r.integrity_errors);
        f.limit = 0;
        f.unit = "errors";
        f.fields.emplace_back("count", std::to_string(*r.integrity_errors));
        f.fields.emplace_back(
            "tested", r.bytes_tested ? format_bytes(static_cast<std::uint64_t>(*r.bytes_tested))
                                     : std::string("an unknown amount"));
        f.fields.emplace_back(
            "detail", r.first_error.empty() ? "" : fmt::format(", first at {}", r.first_error));
        out.push_back(std::move(f));
      } else if (r.status == RecordStatus::kFail) {
        f.code = "stage.fail";
        f.fields.emplace_back("detail", r.reason.empty() ? "no reason given" : r.reason);
        out.push_back(std::move(f));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_membw_integrity_rule() {
  return std::make_unique<MembwIntegrityRule>();
}

}  // namespace commcert::rules
