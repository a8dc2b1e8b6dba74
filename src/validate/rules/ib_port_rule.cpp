#include <algorithm>

#include <fmt/format.h>

#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// A port that is not ACTIVE/LinkUp carries no traffic. Error counters are cumulative and
// saturate, so only the link-flap count (AzNHC: 5 in a day fails) quarantines by default; the
// rest are warnings.
class IbPortRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.ib_port"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const auto& limits = context.baseline.ib_health;
    const Evidence& evidence = context.evidence;
    const auto in = [](const std::vector<std::string>& list, std::string_view value) {
      return std::find(list.begin(), list.end(), value) != list.end();
    };
    for (const auto& r : evidence.ib_ports) {
      if (r.status != RecordStatus::kOk || !limits.judges(evidence.text(r.link_layer))) continue;
      const std::string device(evidence.text(r.device));
      const auto make = [&](ReasonCode code) {
        Finding f = gpu_finding(evidence, code, id(), "health.ib", r.node, {}, r.ref);
        f.link = LinkRef{"ib_port", device, r.port, {}};
        set_field(f, "where", fmt::format("{} port {}: ", device, r.port));
        return f;
      };
      const std::string_view state = evidence.text(r.state);
      const std::string_view phys = evidence.text(r.phys_state);
      if (!in(limits.up_states, state) || !in(limits.up_phys_states, phys)) {
        Finding f = make("health.ib_port_down");
        f.fields.emplace_back("state", state.empty() ? "unknown" : std::string(state));
        f.fields.emplace_back("phys", phys.empty() ? "unknown" : std::string(phys));
        out.push_back(std::move(f));
      }
      for (const auto& counter : r.counters) {
        // Not a structured binding: clang 14, which clang-tidy parses with, cannot capture one
        // in a lambda.
        const std::string name(evidence.text(counter.first));
        const auto count = counter.second;
        const auto check = [&](const std::map<std::string, std::int64_t>& table, ReasonCode code) {
          const auto it = table.find(name);
          if (it == table.end() || count <= it->second) return false;
          Finding f = make(code);
          f.measured = static_cast<double>(count);
          f.limit = static_cast<double>(it->second);
          f.fields.emplace_back("counter", name);
          f.fields.emplace_back("count", std::to_string(count));
          f.fields.emplace_back("limit", std::to_string(it->second));
          out.push_back(std::move(f));
          return true;
        };
        if (!check(limits.fail_counters, "health.ib_counter")) {
          (void)check(limits.warn_counters, "health.ib_errors");
        }
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_ib_port_rule() {
  return std::make_unique<IbPortRule>();
}

}  // namespace commcert::rules
