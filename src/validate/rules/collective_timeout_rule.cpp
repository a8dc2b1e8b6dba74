#include <map>
#include <set>

#include <fmt/format.h>

#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// A rank that never arrived at an operation its peers waited in is the node to look at. When
// every rank arrived (the operation itself hung) or peers could not be asked, nobody can be
// blamed: every member of the communicator is inconclusive, never quarantined on a guess.
class CollectiveTimeoutRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.collective_timeout"; }

  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const Evidence& evidence = context.evidence;
    for (const auto& t : evidence.timeouts) {
      const std::string run(evidence.text(evidence.runs[t.run].run_id));
      std::string operation = t.operation;
      if (operation.empty()) operation = "set-up";
      const auto base = [&](ReasonCode code, NodeId node) {
        Finding f;
        f.code = code;
        f.node = node;
        f.check = check_of_operation(operation);
        f.rule = std::string(id());
        f.measured = t.timeout_s;
        f.unit = "s";
        f.evidence.push_back(t.ref);
        f.fields = {
            {"operation", operation}, {"timeout", format_figure(t.timeout_s)}, {"run", run}};
        return f;
      };
      if (t.attributed && !t.not_arrived.empty()) {
        std::map<NodeId, std::vector<std::string>> ranks;
        for (const auto& [rank, node] : t.not_arrived)
          ranks[node].push_back(std::to_string(rank));
        for (const auto& [node, list] : ranks) {
          Finding f = base("collective.not_arrived", node);
          f.fields.emplace_back("ranks", join(list));
          out.push_back(std::move(f));
        }
        continue;
      }
      std::set<NodeId> members(t.members.begin(), t.members.end());
      members.insert(evidence.runs[t.run].nodes.begin(), evidence.runs[t.run].nodes.end());
      const std::string detail = t.attributed ? " with every rank inside it"
                                              : " and peers could not be asked who was missing";
      for (const NodeId node : members) {
        Finding f = base("collective.timeout_unattributed", node);
        f.fields.emplace_back("detail", detail);
        out.push_back(std::move(f));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_collective_timeout_rule() {
  return std::make_unique<CollectiveTimeoutRule>();
}

}  // namespace commcert::rules
