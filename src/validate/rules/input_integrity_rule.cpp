#include <map>
#include <optional>

#include <fmt/format.h>

#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// The reader's issues that mean a record was lost, as the reasons they raise.
std::optional<ReasonCode> lost_evidence_code(std::string_view issue) {
  for (const ReasonCode code : {ReasonCode("input.unparsable"), ReasonCode("input.truncated"),
                                ReasonCode("input.unsupported_schema")}) {
    if (code.view() == issue) return code;
  }
  return std::nullopt;
}

// A line that could not be read was evidence once: fail closed. The nodes it could have been
// about are inconclusive: the node it names (per-node kinds), else every node of its run, else
// every node of its file.
class InputIntegrityRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.input_integrity"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const Evidence& evidence = context.evidence;
    struct Tally {
      const InputIssue* first = nullptr;
      std::size_t count = 0;
    };
    std::map<std::tuple<NodeId, ReasonCode, std::uint32_t>, Tally> lost;  // (node, code, file)
    for (const auto& issue : evidence.issues) {
      const std::optional<ReasonCode> code = lost_evidence_code(issue.code);
      if (!code) continue;  // a note (duplicates, unknown kinds), not lost evidence
      const auto affect = [&](NodeId node) {
        Tally& t = lost[{node, *code, issue.ref.file}];
        if (t.count++ == 0) t.first = &issue;
      };
      if (issue.node != kNoString) {
        affect(issue.node);
      } else if (issue.run != kNoString && !evidence.runs[issue.run].nodes.empty()) {
        for (const NodeId node : evidence.runs[issue.run].nodes)
          affect(node);
      } else {
        for (const NodeId node : evidence.file_nodes[issue.ref.file])
          affect(node);
      }
    }
    for (const auto& [key, t] : lost) {
      const auto& [node, code, file] = key;
      Finding f;
      f.code = code;
      f.node = node;
      f.check = "input";
      f.rule = std::string(id());
      f.evidence.push_back(t.first->ref);
      std::string detail = t.first->detail;
      if (t.count > 1) detail += fmt::format("; {} more such lines", t.count - 1);
      f.fields = {{"file", evidence.files[file].path},
                  {"line", std::to_string(t.first->ref.line)},
                  {"detail", detail}};
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_input_integrity_rule() {
  return std::make_unique<InputIntegrityRule>();
}

}  // namespace commcert::rules
