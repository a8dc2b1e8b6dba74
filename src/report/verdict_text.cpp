#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/printable.hpp"
#include "report/verdict_reporter.hpp"

namespace commcert {
namespace {

// The human summary: counts, then one line per node that is not certified with the reason to
// act on first, then suspect links and switch paths, then what was odd about the input.
class TextReporter final : public VerdictReporter {
 public:
  std::string render(const Report& report) const override {
    const FleetVerdict& v = report.verdict;
    std::string out;
    const std::string suite =
        v.suite_name.empty() ? "the baseline's" : "suite " + v.suite_name + "'s";
    out += fmt::format(
        "commcert certify: {} node(s) against baseline {} ({}), {} required checks: {}\n",
        v.nodes.size(), printable(v.sku), printable(v.baseline_path), printable(suite),
        fmt::join(v.required, ", "));
    out += fmt::format("certified {}, quarantined {}, inconclusive {}\n",
                       v.count(NodeState::kCertified), v.count(NodeState::kQuarantined),
                       v.count(NodeState::kInconclusive));
    std::size_t width = 4;
    for (const auto& node : v.nodes) {
      if (node.state != NodeState::kCertified)
        width = std::max(width, std::min<std::size_t>(printable(node.node).size(), 32));
    }
    std::size_t warned = 0;
    for (const auto& node : v.nodes) {
      const Reason* first = node.first_reason();
      if (!first) {
        warned += node.reasons.empty() ? 0 : 1;
        continue;
      }
      const std::size_t more = node.reasons.size() - 1;
      // Names and messages come from records, which anyone can edit: escaped, so a control
      // character in a node name cannot split or rewrite this line.
      out += fmt::format("  {:<{}}  {:<12}  {:<7}  {}{}\n", printable(node.node), width,
                         to_string(node.state), to_string(node.severity), printable(first->message),
                         more > 0 ? fmt::format(" (+{} more)", more) : "");
    }
    // A suspect link or switch path blames none of its nodes, so it shows in no node's line:
    // name it here, once.
    std::set<std::string> links;
    for (const auto& node : v.nodes) {
      for (const auto& reason : node.reasons) {
        if (reason.code == "localization.suspect_link" ||
            reason.code == "localization.suspect_switch") {
          links.insert(reason.message);
        }
      }
    }
    for (const auto& link : links)
      out += fmt::format("  suspect {}\n", printable(link));
    if (warned > 0) {
      out +=
          fmt::format("{} certified node(s) carry warnings (monitor); see verdict.json\n", warned);
    }
    std::size_t records = 0, duplicates = 0, unreadable = 0;
    for (const auto& input : v.inputs) {
      records += input.records;
      duplicates += input.duplicates;
      unreadable += input.unreadable;
    }
    out += fmt::format(
        "input: {} file(s), {} record(s), {} duplicate line(s), {} unreadable line(s)\n",
        v.inputs.size(), records, duplicates, unreadable);
    for (const auto& note : v.notes) {
      out += fmt::format("note: {}{} [{}]\n", printable(note.place()), printable(note.message),
                         note.code);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<VerdictReporter> make_text_reporter() {
  return std::make_unique<TextReporter>();
}

}  // namespace commcert
